import BeekonWire
import Foundation

/// One drain: `DrainPipeline` decides, this runs its actions as child tasks and feeds back
/// what happened. One request is on the wire at a time; the assembly and encoding of the
/// next batch and the mark of the one before run beside it, in one transaction, so the
/// SDK's database work and compression overlap the network and the server. That work starts
/// once the request beside it has been handed to the transport: on a device with one free
/// core, 11 ms of assembly (per 1,000 fixes) started at the same moment delayed the request's
/// own hops by ~3 ms per batch (benchmark P3, pinned).
extension SyncEngine {
    /// Sends batches until the queue is empty or one fails (SY-4..7).
    func drain(within lease: any ExecutionLease) async {
        status.publish(.inFlight)
        var pipeline = DrainPipeline(batchSize: config.effectiveBatchSize)
        await withTaskGroup(of: [DrainPipeline.Event].self) { group in
            var actions = pipeline.start()
            while true {
                // Opens when the request launched in this round has been handed to the transport
                // (or its send ended without one): the preparation launched beside it waits for it.
                var handOver: RequestHandOver?
                while !actions.isEmpty {
                    switch actions.removeFirst() {
                    case .prepare(let excluding, let accepted):
                        let (store, config, device, now, makeID) = (store, config, device, clock.now(), makeID)
                        let gate = handOver
                        group.addTask {
                            await gate?.wait()
                            return await Self.prepare(
                                store: store, excluding: excluding, acknowledging: accepted, config: config, device: device,
                                now: now, makeID: makeID)
                        }
                    case .send(let batch):
                        // Stopped (shutdown) before it went out: it stays queued under its id.
                        guard !stopped else {
                            actions += pipeline.handle(.answered(batch.batch.id, accepted: false))
                            continue
                        }
                        let gate = RequestHandOver()
                        handOver = gate
                        group.addTask {
                            defer { gate.open() }
                            return [.answered(batch.batch.id, accepted: await self.send(batch, within: lease, willSend: gate.open))]
                        }
                    case .acknowledge(let id):
                        let (store, keep) = (store, config.keepUploadedLocations)
                        group.addTask {
                            do throws(BeekonError) {
                                _ = try await store.acknowledge(id, keepLocations: keep)
                                return [.acknowledged(id, failure: nil)]
                            } catch {
                                return [.acknowledged(id, failure: error)]
                            }
                        }
                    case .finish(let end):
                        await finish(end)
                        return
                    }
                }
                guard let events = await group.next() else { return }
                for event in events {
                    if case .acknowledged(let id, let failure?) = event {
                        logger.error(
                            "could not record an accepted upload; its batch goes again later (the server dedupes it)",
                            metadata: ["batch": "\(id.wireString)", "error": "\(failure)"])
                    }
                    actions += pipeline.handle(event)
                }
            }
        }
    }

    /// Acts on how the drain ended; a failed exchange has already been acted on by `send`.
    private func finish(_ end: DrainPipeline.End) async {
        switch end {
        case .drained:
            hold = nil
            consecutiveFailures = 0
            await report(.succeeded(at: clock.now()))
        case .stopped:
            break
        case .acknowledgementFailed:
            await scheduleRetry("could not record an accepted upload")
        case .preparationFailed(let why):
            logger.error("could not assemble a batch", metadata: ["error": "\(why)"])
            await scheduleRetry("could not assemble a batch: \(why)")
        }
    }

    /// Marks `accepted` uploaded (if any) and assembles the next batch (an open one first,
    /// else a new one from the queue) in one transaction, then encodes it.
    private static func prepare(
        store: LocationStore, excluding: Set<UUID>, acknowledging accepted: UUID?, config: SyncConfig, device: WireDevice,
        now: Date, makeID: @escaping @Sendable () -> UUID
    ) async -> [DrainPipeline.Event] {
        do throws(BeekonError) {
            let (batch, markFailure) = try await store.nextBatch(
                limit: config.effectiveBatchSize, now: now, excluding: excluding, makeID: makeID,
                acknowledging: accepted, keepLocations: config.keepUploadedLocations)
            let prepared = batch.map { PreparedBatch(batch: $0, device: device, privacy: config.privacy) }
            let mark: [DrainPipeline.Event] = accepted.map { [.acknowledged($0, failure: markFailure)] } ?? []
            return mark + [.prepared(.success(prepared))]
        } catch {
            let mark: [DrainPipeline.Event] = accepted.map { [.acknowledged($0, failure: error)] } ?? []
            return mark + [.prepared(.failure(error))]
        }
    }
}
