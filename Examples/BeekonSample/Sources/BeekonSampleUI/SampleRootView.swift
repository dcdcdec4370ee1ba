import SwiftUI

/// The sample's screen with its model: put it in a `WindowGroup` after the SDK's launch call
/// (the macOS executable `BeekonSample` does; the iOS app passes the model its app delegate
/// feeds with push registrations).
public struct SampleRootView: View {
    @State private var model: TrackerModel

    /// The screen with a model of its own.
    public init() {
        _model = State(initialValue: TrackerModel())
    }

    /// The screen showing `model`.
    init(model: TrackerModel) {
        _model = State(initialValue: model)
    }

    public var body: some View {
        ContentView(model: model)
    }
}
