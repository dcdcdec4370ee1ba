import Beekon
import BeekonSampleUI
import SwiftUI

/// The sample's entry point: the SDK's launch call in the `App` initialiser (iOS requires the
/// background task registration before launch finishes), then one window.
@main
struct BeekonSampleApp: App {
    init() {
        Beekon.shared.registerBackgroundTasks()
    }

    var body: some Scene {
        WindowGroup {
            SampleRootView()
        }
    }
}
