import BeekonChaos
import BeekonPrimitives
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A trial's `beekon-ingest`: started, SIGKILLed and started again on the same database.
/// A watcher per process reports an exit the harness did not cause as a crash and starts
/// the server again; every new port goes to `onPort` (the proxy's upstream).
final class ServerSlot: Sendable {
    private let options: ChaosOptions
    private let database: String
    private let directory: String
    private let extra: [String]
    private let tally: Tally
    private let onPort: @Sendable (Int) -> Void
    private struct State {
        var current: ServerProcess?
        var down = false
        var closing = false
    }

    private let state = Locked(State())

    init(
        options: ChaosOptions, database: String, directory: String, extra: [String], tally: Tally,
        onPort: @escaping @Sendable (Int) -> Void
    ) {
        self.options = options
        self.database = database
        self.directory = directory
        self.extra = extra
        self.tally = tally
        self.onPort = onPort
    }

    /// The port of the running server (the last one while it is down).
    var port: Int { state.withLock { $0.current?.port ?? 0 } }

    /// Whether a kill's restart is pending.
    var isDown: Bool { state.withLock { $0.down } }

    /// Starts a server (waits for its listening line) and watches it.
    func start() async throws {
        let server = try await ServerProcess.start(
            binary: options.ingest, database: database, directory: directory,
            extra: ["--api-key", ChaosOptions.apiKey, "--auth", "required"] + extra)
        state.withLock { state in
            state.current = server
            state.down = false
        }
        onPort(server.port)
        Task { await watch(server) }
    }

    /// SIGKILLs the server (a write may be mid-commit) and waits for it to be gone; `start()`
    /// brings it back.
    func kill() async {
        guard
            let server = state.withLock({ state -> ServerProcess? in
                guard !state.down else { return nil }
                state.down = true
                return state.current
            })
        else { return }
        server.child.kill()
        _ = await server.child.exited(timeout: .seconds(10))
        tally.add("kill_server")
    }

    /// SIGTERM at the end of a trial: the server must exit 0.
    func close() async {
        guard
            let server = state.withLock({ state -> ServerProcess? in
                state.closing = true
                return state.current
            }), server.child.isRunning
        else { return }
        server.child.kill(SIGTERM)
        if await server.child.exited(timeout: .seconds(20)) {
            let status = server.child.outcome.status
            if status != 0 { tally.crash("beekon-ingest exited \(status) on SIGTERM") }
        } else {
            server.child.kill()
        }
    }

    private func watch(_ server: ServerProcess) async {
        // Bounded by the longest a trial can last.
        let bound = Duration.seconds(options.duration + Double(options.drainTimeout) * 4 + 900)
        guard await server.child.exited(timeout: bound), !server.child.wasKilled else { return }
        let restart = state.withLock { state -> Bool in
            guard !state.closing, state.current?.pid == server.pid else { return false }
            state.down = true
            return true
        }
        guard restart else { return }
        tally.crash("beekon-ingest exited \(server.child.outcome.status) without being killed")
        do { try await start() } catch { tally.crash("beekon-ingest did not start again: \(error)") }
    }
}
