import Foundation

/// The location source's lifecycle: started and stopped by the machine's actions, its
/// fixes fed to `receive` under a generation so a stopped run's fixes are ignored, and
/// its end (or failure) reported to the machine and to `waitUntilSourceEnds()`.
extension Beekon {
    /// Starts the provider in `mode` and the task that reads its fixes into the actor.
    func startSource(mode: PowerMode) async throws {
        source.generation += 1
        let generation = source.generation
        source.ended = false
        await tuneSource()
        let stream = try await deps.provider.start(mode: mode)
        source.consumer = Task { [weak self] in
            do {
                for try await fix in stream {
                    guard let self else { return }
                    await self.receive(fix, generation: generation)
                }
                await self?.sourceFinished(generation: generation, error: nil)
            } catch {
                await self?.sourceFinished(generation: generation, error: error)
            }
        }
        rearmHeartbeat()
    }

    /// Stops the provider and its timers. Stopping ends its stream; the generation bump
    /// makes any fix still in flight a no-op. The consume task is not cancelled: this may
    /// run on it (a source failure), and the writes that follow must not see a cancelled task.
    func stopSource() async {
        await apply(core.sourceStopped())
        stopHeartbeat()
        source.dwellTimer?.cancel()
        source.dwellTimer = nil
        source.generation += 1
        source.consumer = nil
        await deps.provider.stop()
        source.ended = true  // waiters are woken once every action ran (see performThrowing)
    }

    private func sourceFinished(generation: Int, error: (any Error)?) async {
        guard generation == source.generation else { return }
        if let error {
            let failure = error as? LocationProviderError ?? .failed("\(error)")
            logger.error("location source failed", metadata: ["error": "\(failure)"])
            await perform(core.machine.providerFailed(failure))
        } else {
            logger.info("location source ended")
        }
        source.ended = true
        wakeSourceEndWaiters()
    }

    /// Resumes every caller of `waitUntilSourceEnds()`.
    func wakeSourceEndWaiters() {
        for w in source.takeEndWaiters() { w.resume() }
    }
}
