import Beekon
import BeekonSampleUI
import SwiftUI

/// The sample's entry point: the SDK's synchronous launch call in the `App` initialiser (it
/// retakes CoreLocation's sessions "immediately" on a background relaunch and registers the
/// background task before launch finishes), then one window.
@main
struct BeekonSampleApp: App {
    init() {
        Beekon.shared.launch()
    }

    var body: some Scene {
        WindowGroup {
            SampleRootView()
        }
    }
}
