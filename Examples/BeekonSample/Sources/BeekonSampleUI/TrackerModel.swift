import Beekon
import CoreLocation
import Foundation
import Observation

/// What the screen shows, fed by the SDK's hot streams (`state`, `positions`) and its calls
/// (`start`, `stop`, `history`, `handleLocateRequest`).
@MainActor
@Observable
final class TrackerModel {
    /// The SDK's lifecycle state.
    var state: BeekonState = .idle
    /// The fixes stored since the app opened (the live map), newest last, at most 1,000.
    var recent: [Location] = []
    /// The last 24 hours from the on-device history.
    var history: [Location] = []
    /// The outcome of the last locate request.
    var locateAnswer = "no request yet"
    /// The last error, shown under the buttons.
    var lastError: String?

    /// Authorization is the host's job: the SDK never prompts.
    private let locationManager = CLLocationManager()

    var isTracking: Bool {
        if case .tracking = state { return true }
        return false
    }

    /// Follows the SDK's streams for as long as the view lives.
    nonisolated func observe() async {
        async let states: Void = followState()
        async let fixes: Void = followPositions()
        _ = await (states, fixes)
    }

    private nonisolated func followState() async {
        for await next in Beekon.shared.state {
            await MainActor.run { self.state = next }
        }
    }

    private nonisolated func followPositions() async {
        for await location in Beekon.shared.positions {
            await MainActor.run {
                self.recent.append(location)
                if self.recent.count > 1_000 { self.recent.removeFirst(self.recent.count - 1_000) }
            }
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

    func loadHistory() async {
        let now = Date()
        do {
            history = try await Beekon.shared.history(from: now.addingTimeInterval(-86_400), to: now).reversed()
            lastError = nil
        } catch {
            lastError = "\(error)"
        }
    }

    /// What a silent push asking "where are you?" would trigger: one fresh fix, stored and uploaded.
    func locate() async {
        switch await Beekon.shared.handleLocateRequest(id: UUID()) {
        case .answered(let location):
            locateAnswer = String(
                format: "answered: %.5f, %.5f ±%.0f m", location.latitude, location.longitude, location.accuracy ?? -1)
        case .refused(let reason):
            locateAnswer = "refused: \(reason)"
        }
    }
}
