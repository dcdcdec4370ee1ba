/// A dotted version such as `16`, `17.0` or `10.14.4`; compared component by component.
public struct Version: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric components; trailing zeros do not change the order (`17` == `17.0`).
    public let components: [Int]

    /// Parses `17`, `17.0`, `10.14.4`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        var numbers: [Int] = []
        for part in parts {
            guard let number = Int(part), number >= 0 else { return nil }
            numbers.append(number)
        }
        guard !numbers.isEmpty else { return nil }
        components = numbers
    }

    private func padded(_ count: Int) -> [Int] { components + Array(repeating: 0, count: max(0, count - components.count)) }

    public static func < (lhs: Version, rhs: Version) -> Bool {
        let count = max(lhs.components.count, rhs.components.count)
        return lhs.padded(count).lexicographicallyPrecedes(rhs.padded(count))
    }

    public static func == (lhs: Version, rhs: Version) -> Bool {
        let count = max(lhs.components.count, rhs.components.count)
        return lhs.padded(count) == rhs.padded(count)
    }

    public func hash(into hasher: inout Hasher) {
        var trimmed = components
        while trimmed.count > 1, trimmed.last == 0 { trimmed.removeLast() }
        hasher.combine(trimmed)
    }

    public var description: String { components.count == 1 ? "\(components[0]).0" : components.map(String.init).joined(separator: ".") }
}

/// The Apple platforms the package declares (Package.swift `platforms:`); the check runs once for each.
public enum ApplePlatform: String, CaseIterable, Hashable, Sendable, Comparable {
    case iOS, macOS

    /// The platform an availability or `os()` name refers to (`iOSApplicationExtension` is iOS,
    /// `OSX` is macOS); nil for platforms the package does not support (watchOS, tvOS, visionOS,
    /// macCatalyst), which the check ignores.
    public init?(availabilityName name: String) {
        switch name {
        case "iOS", "iOSApplicationExtension": self = .iOS
        case "macOS", "OSX", "macOSApplicationExtension", "OSXApplicationExtension": self = .macOS
        default: return nil
        }
    }

    public static func < (lhs: ApplePlatform, rhs: ApplePlatform) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What an `@available(…)` attribute, an `#available(…)` condition or a table entry says about
/// the supported platforms.
public struct Availability: Hashable, Sendable {
    /// The first version of each platform named with a version.
    public var introduced: [ApplePlatform: Version] = [:]
    /// Platforms the declaration is unavailable on (`@available(macOS, unavailable)`, `API_UNAVAILABLE(macos)`).
    public var unavailable: Set<ApplePlatform> = []

    /// Nothing said.
    public init() {}

    /// Built from a table entry.
    public init(iOS: String? = nil, macOS: String? = nil, unavailable: Set<ApplePlatform> = []) {
        if let iOS { introduced[.iOS] = Version(iOS) }
        if let macOS { introduced[.macOS] = Version(macOS) }
        self.unavailable = unavailable
    }

    /// Parses the argument text of `@available(…)` / `#available(…)` / `#unavailable(…)`:
    /// the shorthand (`iOS 17.0, macOS 14, *`), the long form (`macOS, unavailable`,
    /// `iOS, introduced: 17.0, deprecated: 18.0`) and the wildcard form (`*, unavailable`).
    public init(arguments text: String) {
        let items = Availability.splitArguments(text)
        guard let first = items.first else { return }
        if first == "*" {
            if items.contains("unavailable") { unavailable = Set(ApplePlatform.allCases) }
            return
        }
        let firstWords = first.split(separator: " ")
        if firstWords.count == 1 {
            // Long form: one platform, then labelled arguments.
            guard let platform = ApplePlatform(availabilityName: String(firstWords[0])) else { return }
            for item in items.dropFirst() {
                if item == "unavailable" { unavailable.insert(platform) }
                if item.hasPrefix("introduced:"),
                    let version = Version(item.dropFirst("introduced:".count).trimmingCharacters(in: " "))
                {
                    introduced[platform] = version
                }
            }
            return
        }
        for item in items where item != "*" {
            let words = item.split(separator: " ", omittingEmptySubsequences: true)
            guard words.count == 2, let platform = ApplePlatform(availabilityName: String(words[0])),
                let version = Version(String(words[1]))
            else { continue }
            introduced[platform] = version
        }
    }

    /// Top-level comma split that ignores commas inside string literals (`message: "a, b"`).
    static func splitArguments(_ text: String) -> [String] {
        var items: [String] = []
        var current = ""
        var inString = false
        for character in text {
            if character == "\"" { inString.toggle() }
            if character == ",", !inString {
                items.append(current.trimmingCharacters(in: " \n\t"))
                current = ""
            } else {
                current.append(character)
            }
        }
        let last = current.trimmingCharacters(in: " \n\t")
        if !last.isEmpty { items.append(last) }
        return items
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}
