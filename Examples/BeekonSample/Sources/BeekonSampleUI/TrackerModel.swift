import Beekon
import CoreLocation
import Foundation
import Observation

/// What the screen shows, fed by the SDK's hot streams (`state`, `locationHealth`,
/// `positions`, `syncStatus`) and its calls (`enroll`, `configure`, `start`, `stop`, `history`).
/// Locate requests are answered by the SDK itself (a silent push the app forwards, or the answer
/// to an upload); the model shows the fixes that answered one.
@MainActor
@Observable
final class TrackerModel {
    /// The SDK's lifecycle state.
    var state: BeekonState = .idle
    /// What CoreLocation lets the SDK do now (empty: nothing in the way).
    var health: LocationHealth = []
    /// The latest upload status.
    var sync = "not configured"
    /// The fixes stored since the app opened (the live track), newest last, at most 1,000.
    var recent: [Location] = []
    /// Today's fixes from the on-device history (since local midnight), oldest first.
    var today: [Location] = []
    /// The server this install enrolled with (nil: not enrolled yet).
    var server: URL?
    /// Whether an enrolment is under way.
    var enrolling = false
    /// The outcome of the push-token registration.
    var push = "not registered"
    /// The newest fix that answered a locate request, and when it was taken.
    var lastLocateAnswer: Location?
    /// The last error, shown under the buttons.
    var lastError: String?

    /// Authorization is the host's job: the SDK never prompts.
    @ObservationIgnored private let locationManager = CLLocationManager()
    /// Where the enrolled server's address is kept across launches.
    @ObservationIgnored private let defaults: UserDefaults
    @ObservationIgnored private static let serverKey = "BeekonSample.server"

    /// A model reading the enrolled server from `defaults`.
    init(defaults: UserDefaults = .standard) {
        self.defaults = defaults
        server = defaults.string(forKey: Self.serverKey).flatMap(URL.init(string:))
    }

    var isTracking: Bool {
        if case .tracking = state { return true }
        return false
    }

    /// Follows the SDK's streams for as long as the view lives.
    nonisolated func observe() async {
        async let states: Void = followState()
        async let health: Void = followHealth()
        async let fixes: Void = followPositions()
        async let uploads: Void = followSync()
        _ = await (states, health, fixes, uploads)
    }

    private nonisolated func followState() async {
        for await next in Beekon.shared.state {
            await MainActor.run { self.state = next }
        }
    }

    private nonisolated func followHealth() async {
        for await next in Beekon.shared.locationHealth {
            await MainActor.run { self.health = next }
        }
    }

    private nonisolated func followSync() async {
        for await next in Beekon.shared.syncStatus {
            await MainActor.run { self.sync = next.description }
        }
    }

    private nonisolated func followPositions() async {
        for await location in Beekon.shared.positions {
            await MainActor.run { self.add(location) }
        }
    }

    private func add(_ location: Location) {
        recent.append(location)
        if recent.count > 1_000 { recent.removeFirst(recent.count - 1_000) }
        if location.locateRequestId != nil { lastLocateAnswer = location }
    }

    /// What the app was started with, for unattended runs (`.github/workflows/apple.yml`
    /// launches the simulator's app with `SIMCTL_CHILD_`-prefixed variables): `BEEKON_SERVER`
    /// and `BEEKON_ENROLLMENT_CODE` enrol once, `BEEKON_AUTOSTART=1` starts tracking.
    struct LaunchOptions: Sendable, Equatable {
        /// The server to enrol with.
        var server: String?
        /// The enrollment code an admin created on it.
        var code: String?
        /// Whether to start tracking at once.
        var autostart: Bool

        /// Reads the options from a process environment.
        init(environment: [String: String]) {
            server = environment["BEEKON_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            code = environment["BEEKON_ENROLLMENT_CODE"].flatMap { $0.isEmpty ? nil : $0 }
            autostart = environment["BEEKON_AUTOSTART"] == "1"
        }
    }

    /// Applies the launch options: enrols when asked and not enrolled yet, then starts when asked.
    func apply(_ options: LaunchOptions) async {
        if server == nil, let address = options.server, let code = options.code {
            await enroll(server: address, code: code)
        }
        if options.autostart, !isTracking { await startOrStop() }
    }

    /// Enrols this install with a `beekon-ingest` server (`server` is its base URL, e.g.
    /// `https://ingest.example.com`) and turns uploads on: the code is exchanged at
    /// `/oauth/token` for this install's tokens, which the SDK keeps and refreshes from then on,
    /// and the configuration (persisted by the SDK) uploads to `/v1/locations`.
    func enroll(server address: String, code: String) async {
        let trimmed = address.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let base = URL(string: trimmed.hasSuffix("/") ? String(trimmed.dropLast()) : trimmed), base.host != nil else {
            lastError = "the server address must be a URL such as https://ingest.example.com"
            return
        }
        enrolling = true
        defer { enrolling = false }
        do {
            let auth = try await Beekon.shared.enroll(
                code: code.trimmingCharacters(in: .whitespacesAndNewlines), tokenURL: base.appendingPathComponent("oauth/token"))
            // Uploads every minute, or as soon as five fixes wait: a sample should show its
            // track on the dashboard quickly (the SDK's default is every five minutes).
            let sync = SyncConfig(url: base.appendingPathComponent("v1/locations"), intervalSeconds: 60, syncThreshold: 5, auth: auth)
            var config = try await Beekon.shared.configuration()
            config.sync = sync
            try await Beekon.shared.configure(config)
            defaults.set(base.absoluteString, forKey: Self.serverKey)
            server = base
            lastError = nil
        } catch {
            lastError = "\(error)"
        }
    }

    /// When In Use first; Always only after the user has used tracking once (see the README).
    func requestAuthorization() {
        if locationManager.authorizationStatus == .notDetermined {
            locationManager.requestWhenInUseAuthorization()
        } else {
            locationManager.requestAlwaysAuthorization()
        }
    }

    func startOrStop() async {
        do {
            if isTracking {
                try await Beekon.shared.stop()
            } else {
                try await Beekon.shared.start()
            }
            lastError = nil
        } catch {
            lastError = "\(error)"
        }
    }

    /// Reads today's fixes (since local midnight) from the on-device history.
    func loadToday() async {
        let now = Date()
        do {
            today = try await Beekon.shared.history(from: Calendar.current.startOfDay(for: now), to: now)
            lastError = nil
        } catch {
            lastError = "\(error)"
        }
    }

    /// Records how the push-token registration went (the app delegate reports it).
    func pushRegistered(_ registered: Bool) {
        push = registered ? "registered with the server" : "not registered yet (sent again after the next upload)"
    }

    /// Records that the system refused a push token (no push entitlement, a simulator, no network).
    func pushFailed(_ error: any Error) {
        push = "no token: \(error.localizedDescription)"
    }
}

extension LocationHealth {
    /// The conditions, named as the SDK's documentation names them ("ok" when none).
    var names: String {
        let all: [(LocationHealth, String)] = [
            (.awaitingAuthorization, "awaiting authorization"), (.insufficientlyInUse, "insufficiently in use"),
            (.serviceSessionRequired, "service session required"), (.locationUnavailable, "location unavailable"),
            (.accuracyLimited, "accuracy limited"),
        ]
        let present = all.filter { contains($0.0) }.map(\.1)
        return present.isEmpty ? "ok" : present.joined(separator: ", ")
    }
}
