import SwiftUI

/// The sample's screen with its model: put it in a `WindowGroup` (the `BeekonSample` executable
/// does; so can an iOS app target in Xcode, after the SDK's launch call in its initialiser).
public struct SampleRootView: View {
    @State private var model = TrackerModel()

    /// The screen.
    public init() {}

    public var body: some View {
        ContentView(model: model)
    }
}
