#if (canImport(UIKit) && os(iOS)) || BEEKON_APPLE_SHIM
    import Foundation
    import UIKit
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    /// The app's lifecycle from UIKit (BY-4): `applicationState` when observing begins, then
    /// `willEnterForegroundNotification`, `didBecomeActiveNotification` and
    /// `didEnterBackgroundNotification`, as ``AppLifecycleEvent``s. One UIKit read per value;
    /// ``AppLifecycleRule`` decides what they mean.
    public struct UIKitLifecycleSource: AppLifecycleSource {
        /// Creates the source; nothing is observed until ``events()`` is called.
        public init() {}

        /// The events from now on; observing stops when the stream's consumer goes away.
        public func events() async -> AsyncStream<AppLifecycleEvent> {
            let (stream, sink) = AsyncStream.makeStream(of: AppLifecycleEvent.self)
            let observers = await MainActor.run {
                sink.yield(.launched(inBackground: UIApplication.shared.applicationState == .background))
                let center = NotificationCenter.default
                let names: [(NSNotification.Name, AppLifecycleEvent)] = [
                    (UIApplication.willEnterForegroundNotification, .willEnterForeground),
                    (UIApplication.didBecomeActiveNotification, .didBecomeActive),
                    (UIApplication.didEnterBackgroundNotification, .didEnterBackground),
                ]
                return names.map { name, event in
                    ObserverToken(center.addObserver(forName: name, object: nil, queue: .main) { _ in sink.yield(event) })
                }
            }
            sink.onTermination = { _ in
                for observer in observers { NotificationCenter.default.removeObserver(observer.token) }
            }
            return stream
        }
    }

    /// A `NotificationCenter` observer token, carried to the stream's termination handler.
    private struct ObserverToken: @unchecked Sendable {
        let token: any NSObjectProtocol
        init(_ token: any NSObjectProtocol) { self.token = token }
    }
#endif
