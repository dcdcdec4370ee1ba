#if (canImport(UIKit) && os(iOS)) || BEEKON_APPLE_SHIM
    import Foundation
    import UIKit
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    /// The battery from UIKit and Foundation (BY-2's battery guard), one read per value:
    /// `UIDevice.batteryLevel` ("0 .. 1.0. -1.0 if UIDeviceBatteryStateUnknown", `UIDevice.h`;
    /// monitoring is off by default, so it is switched on first), `batteryState` and
    /// `ProcessInfo.isLowPowerModeEnabled`. ``PowerState`` judges them.
    public struct UIKitPowerStateSource: PowerStateSource {
        /// Creates the source; UIKit is touched at the first read.
        public init() {}

        /// Reads the battery on the main actor (UIDevice is a main-actor class).
        public func current() async -> PowerState {
            let lowPowerMode = ProcessInfo.processInfo.isLowPowerModeEnabled
            return await MainActor.run {
                let device = UIDevice.current
                if !device.isBatteryMonitoringEnabled { device.isBatteryMonitoringEnabled = true }
                let level = device.batteryLevel
                return PowerState(
                    batteryLevel: level < 0 ? nil : Double(level),
                    charging: device.batteryState == .charging || device.batteryState == .full, lowPowerMode: lowPowerMode)
            }
        }
    }
#endif
