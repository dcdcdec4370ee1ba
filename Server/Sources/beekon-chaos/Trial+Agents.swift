import BeekonChaos
import Foundation

extension Trial {
    /// Runs an agent until it ends on its own: after each SIGKILL it comes back (after a
    /// random pause while the chaos lasts) tracking if its session is still on, else
    /// draining its queue; an exit it did not owe to a kill must be 0 or 3 (or 1 with the
    /// disk-full error on a full tmpfs).
    func supervise(_ agent: AgentSlot) async {
        defer { agentsDone.increment() }
        var mode = AgentSlot.Mode.track
        let bound = Duration.seconds(options.duration + Double(options.drainTimeout) * 3 + 600)
        while true {
            let run: ChildProcess
            do { run = try agent.launch(mode, options: options) } catch {
                tally.crash("agent\(agent.index) did not start: \(error)")
                return
            }
            guard await run.exited(timeout: bound) else {
                run.kill()
                tally.crash("agent\(agent.index) `\(mode.rawValue)` did not exit within \(bound)")
                return
            }
            guard run.wasKilled else {
                checkExit(agent, run)
                return
            }
            switch phase {
            case .over: return
            case .chaos:
                // Back at a random moment (the schedule of the chaos, not synchronisation).
                try? await Task.sleep(for: .seconds(pick { Double.random(in: 0...1.5, using: &$0) }))
            case .calm: break
            }
            if agent.sessions.isEmpty {
                mode = .track
            } else {
                mode = await trackingIntent(agent) ? .track : .sync
            }
        }
    }

    /// After the calm phase, one more `beekon sync` per agent for whatever is still queued
    /// (e.g. the last run hit its drain timeout): it must exit 0.
    func finalDrains() async {
        for agent in agents {
            do {
                let outcome = try await agent.launch(.sync, options: options).finish(timeout: .seconds(options.drainTimeout + 30))
                if outcome.status != 0 || outcome.signalled {
                    tally.crash("agent\(agent.index) final sync exited \(outcome.status): \(outcome.stderr.suffix(300))")
                }
            } catch {
                tally.crash("agent\(agent.index) final sync did not finish: \(error)")
            }
        }
    }

    /// Runs a `beekon` query (`status`, `history`) on an agent's database; its stdout, nil
    /// (and a crash) when it failed.
    func query(_ agent: AgentSlot, _ arguments: [String]) async -> String? {
        do {
            let run = try ChildProcess(options.beekon, arguments, directory: directory, name: "agent\(agent.index)-\(arguments[0])")
            let outcome = try await run.finish(timeout: .seconds(120))
            guard outcome.status == 0, !outcome.signalled else {
                tally.crash(
                    "agent\(agent.index) `\(arguments.joined(separator: " "))` exited \(outcome.status): \(outcome.stderr.suffix(300))")
                return nil
            }
            return outcome.stdout
        } catch {
            tally.crash("agent\(agent.index) `\(arguments[0])`: \(error)")
            return nil
        }
    }

    /// The agent's `status --json`.
    func status(_ agent: AgentSlot) async -> [String: Any]? {
        guard let out = await query(agent, ["status", "--db", agent.db, "--json"]) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(out.utf8))) as? [String: Any]
    }

    private func trackingIntent(_ agent: AgentSlot) async -> Bool {
        guard FileManager.default.fileExists(atPath: agent.db) else { return true }
        return await status(agent)?["tracking_intent"] as? Bool ?? false
    }

    private func checkExit(_ agent: AgentSlot, _ run: ChildProcess) {
        let outcome = run.outcome
        // Exit 1 with a storage error is the documented answer to a disk that filled up.
        let diskError =
            outcome.status == 1 && agent.disk != nil
            && (outcome.stderr.suffix(4096) + outcome.stdout.suffix(4096)).contains("the disk is full")
        if outcome.signalled || (![0, 3].contains(outcome.status) && !diskError) {
            tally.crash(
                "agent\(agent.index) `\(run.arguments.prefix(2).joined(separator: " "))` exited "
                    + "\(outcome.signalled ? "on signal " : "")\(outcome.status) without being killed (see \(directory))")
        }
    }
}
