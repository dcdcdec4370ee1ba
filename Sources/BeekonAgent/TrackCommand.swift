import BeekonWire
import ArgumentParser
import Beekon
import BeekonSources
import Foundation
import Logging

struct TrackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "track",
        abstract: "Track from a location source until it ends or SIGINT/SIGTERM.",
        discussion: """
            Resumes the previous session by itself when the last run died while tracking.
            SIGINT stops the session (it will not resume); SIGTERM (service stop) keeps it,
            so the next start resumes the same session. Exit 0 on a clean end.
            """)

    @OptionGroup var sourceOptions: SourceOptions

    @OptionGroup var replay: ReplayOptions

    @OptionGroup var state: StateOptions

    @Option(name: .long, help: "JSON config file (SDK field names).")
    var config: String?

    @Option(name: .long, help: "With sync: seconds to wait for the upload queue to drain before exiting.")
    var drainTimeout: Double = 60

    @OptionGroup var beaconOptions: BeaconOptions

    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = log.bootstrap()
        let agentConfig = try loadConfig(config)
        var beaconFeed = try beaconOptions.feed(logger: logger)
        let spec = try sourceOptions.spec()
        let pace = try replay.pace()
        let dbPath = try state.databasePath()
        let grace = try sourceOptions.grace(default: 60)
        let clock = ReplayClock()
        // A replayed beacon log follows --speed on the track replay's real clock (SRC-4).
        beaconFeed?.pace = pace.speed
        beaconFeed?.realClock = clock.realClock
        let events = SourceEventLog(logger: logger)
        let provider = try sourceOptions.provider(spec, replay: pace, clock: clock, grace: grace, events: events)
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dbPath, provider: provider, clock: clock, logger: logger,
                transport: try AgentTransport.make(agentConfig), authClock: clock.realClock))
        events.attach(beekon.diagnosticLogger)  // source events into the diagnostic log (BY-6)
        var runner = AgentRunner(beekon: beekon, logger: logger, drainTimeout: drainTimeout)
        runner.clock = clock
        runner.sourceFailure = { events.failure }
        runner.beacons = beaconFeed
        do { try await runner.run(config: agentConfig) } catch {
            await beekon.flushDiagnostics()
            throw error
        }
        await beekon.flushDiagnostics()
    }
}

/// Runs the SDK until the source ends or a signal arrives, showing progress.
struct AgentRunner {
    let beekon: Beekon
    let logger: Logger
    var drainTimeout: Double = 60
    /// The SDK's clock, for the age of the last fix in the status line.
    var clock: any BeekonClock = SystemClock()
    /// Why a live source gave up, for the exit message.
    var sourceFailure: @Sendable () -> String? = { nil }
    /// systemd notifications (no-op outside a `Type=notify` service).
    var service = ServiceNotifier.fromEnvironment()
    /// Beacon ranging beside the location source (`--beacons`), if any.
    var beacons: BeaconFeed?

    enum Event: Sendable {
        case sourceEnded
        case signal(Int32)
    }

    func run(config: AgentConfig?) async throws {
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGUSR1, SIGUSR2])
        do {
            if let config {
                try await beekon.configure(config.sdk)
                if let extras = config.extras { try await beekon.setExtras(extras) }
                if let fences = config.geofences { try await beekon.replaceGeofences(with: fences) }
                if let state = config.appState { try await beekon.setAppState(state) }
                if let policy = config.locate { await beekon.setLocatePolicy(policy) }
            }
            if try await beekon.resumeIfNeeded() {
                let session = await beekon.sessionID?.wireString ?? "?"
                Terminal.out("resumed session \(session)")
            } else {
                try await beekon.start()
                Terminal.out("started session \(await beekon.sessionID?.wireString ?? "?")")
            }
        } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        service.ready(status: "tracking session \(await beekon.sessionID?.wireString ?? "?")")
        let heartbeat = service.startHeartbeat(beekon: beekon)
        defer { heartbeat?.cancel() }
        let ranging = beacons.map { feed in Task { [beekon] in await feed.runLogged(into: beekon) } }
        defer { ranging?.cancel() }
        // With sync on, answer locate requests from the server's command channel (BY-2).
        let responder =
            config?.sdk.sync == nil ? nil : Task { [beekon, logger] in await LocateResponder(beekon: beekon, logger: logger).run() }
        defer { responder?.cancel() }
        let progress = ProgressReporter(beekon: beekon, clock: clock)
        let progressTask = Task { await progress.run() }
        let (events, continuation) = AsyncStream<Event>.makeStream()
        Task { [beekon] in
            await beekon.waitUntilSourceEnds()
            continuation.yield(.sourceEnded)
        }
        Task {
            for await s in signals.signals { continuation.yield(.signal(s)) }
        }
        var iterator = events.makeAsyncIterator()
        var event = await iterator.next() ?? .sourceEnded
        // SIGUSR1 / SIGUSR2: the foreground / background profile from the next fix (BY-4).
        while case .signal(let s) = event, s == SIGUSR1 || s == SIGUSR2 {
            try? await beekon.setAppState(s == SIGUSR1 ? .foreground : .background)
            event = await iterator.next() ?? .sourceEnded
        }
        progressTask.cancel()
        await progress.printLine(final: true)
        switch event {
        case .signal(let s) where s == SIGTERM:
            // Service stop: keep the intent so the next start resumes this session.
            service.stopping(status: "terminating; the session resumes on the next start")
            await beekon.shutdown()
            Terminal.out("terminated; the session resumes on the next start")
        case .signal:
            try? await beekon.stop()
            Terminal.out("stopped")
        case .sourceEnded:
            if case .stopped(let reason) = beekon.currentState {
                let why = sourceFailure().map { ": \($0)" } ?? ""
                Terminal.error("location source unavailable (\(reason.rawValue))\(why); exiting")
                service.stopping(status: "location source unavailable (\(reason.rawValue))\(why)")
                throw ExitCode(1)
            }
            // A replayed beacon log ends too: its events go out in the final drain (a live one never ends).
            if case .replay = beacons?.source { await ranging?.value }
            var stopFailure: BeekonError?
            do { try await beekon.stop() } catch { stopFailure = error }
            if let stopFailure {
                // E.g. a full disk: the fixes already stored still go out before the error exit.
                Terminal.error(stopFailure.description)
            } else {
                Terminal.out("source ended; session stopped")
            }
            if try await beekon.configuration().sync != nil {
                try await FinalDrain(beekon: beekon, clock: clock).run(timeout: drainTimeout)
            }
            if stopFailure != nil { throw ExitCode(1) }
        }
    }
}

/// A live status line on a terminal; plain `progress …` lines when not a TTY.
actor ProgressReporter {
    let beekon: Beekon
    let clock: any BeekonClock
    private var lastLine = ""

    init(beekon: Beekon, clock: any BeekonClock) {
        self.beekon = beekon
        self.clock = clock
    }

    func run() async {
        while !Task.isCancelled {
            await printLine(final: false)
            try? await Task.sleep(for: .milliseconds(Terminal.stdoutIsTTY ? 200 : 500))
        }
    }

    /// state, fixes read/admitted/stored, last fix age (SDK clock), pending uploads.
    func printLine(final: Bool) async {
        let s = await beekon.statistics
        let syncOn = (try? await beekon.configuration().sync) != nil
        let pending = syncOn ? (try? await beekon.pendingUploadCount()).map(String.init) ?? "?" : "off"
        let age = s.lastStoredFix.map { "\(max(0, Int(clock.now().timeIntervalSince($0))))s" } ?? "-"
        let line =
            "progress state=\(beekon.currentState) read=\(s.received) admitted=\(s.stored + s.storeFailures) "
            + "stored=\(s.stored) rejected=\(s.tooSoon + s.tooClose + s.notLater) invalid=\(s.invalid)"
            + (s.storeFailures > 0 ? " store_failures=\(s.storeFailures)" : "")
        let tail = " last_fix_age=\(age) pending_uploads=\(pending)"
        if Terminal.stdoutIsTTY {
            Terminal.status(line + tail)
            if final { Terminal.out("") }
        } else if line != lastLine || final {
            Terminal.out(line + tail)
        }
        lastLine = line
    }
}
