import BeekonWire
import Foundation

/// The `device` object of every batch: constant per install.
enum DeviceInfo {
    /// The SDK version reported as `sdk_version` (the repository's one version constant).
    static let sdkVersion = BeekonVersion.current

    /// `linux`, `macos` or `ios` — `linux`/`macos` are must-ignore additions to the schema enum.
    static var platform: String {
        #if os(Linux)
            return "linux"
        #elseif os(macOS)
            return "macos"
        #elseif os(iOS)
            return "ios"
        #else
            return "unknown"
        #endif
    }

    /// A hardware model when the OS tells it (e.g. "Raspberry Pi 4 Model B Rev 1.4"); nil otherwise.
    static var model: String? {
        #if os(Linux)
            for path in ["/proc/device-tree/model", "/sys/devices/virtual/dmi/id/product_name"] {
                if let data = FileManager.default.contents(atPath: path) {
                    let text = String(decoding: data, as: UTF8.self)
                        .trimmingCharacters(in: CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: "\0")))
                    if !text.isEmpty { return WireLimits.prefix(text, bytes: WireLimits.model) }
                }
            }
            return nil
        #else
            var size = 0
            sysctlbyname("hw.machine", nil, &size, nil, 0)
            guard size > 0 else { return nil }
            var buffer = [CChar](repeating: 0, count: size)
            sysctlbyname("hw.machine", &buffer, &size, nil, 0)
            let s = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return s.isEmpty ? nil : WireLimits.prefix(s, bytes: WireLimits.model)
        #endif
    }
}
