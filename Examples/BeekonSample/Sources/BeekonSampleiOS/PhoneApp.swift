// iOS only: the availability check of .ci/run reads this folder for macOS too.
#if canImport(UIKit)
    import SwiftUI

    /// The iOS app (`Examples/BeekonSample/iOS/project.yml` compiles this folder with
    /// `Sources/BeekonSampleUI` into one app target): the app delegate makes the SDK's launch call
    /// and handles pushes; the window shows the delegate's model.
    @main
    struct PhoneApp: App {
        @UIApplicationDelegateAdaptor(AppDelegate.self) private var delegate

        var body: some Scene {
            WindowGroup {
                SampleRootView(model: delegate.model)
            }
        }
    }
#endif
