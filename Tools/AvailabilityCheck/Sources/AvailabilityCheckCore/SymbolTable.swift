/// One parameter of a function or initializer in the table: what a call's argument list is matched against.
public struct Parameter: Hashable, Sendable {
    /// The argument label, `_` for none.
    public let label: String
    /// Whether the parameter has a default value (a call may leave it out).
    public let defaulted: Bool
    /// Whether its type is a function (a trailing closure may fill it).
    public let closure: Bool

    /// Parses one generated parameter: `label`, `?label` (defaulted), `^label` (closure), `?^label`.
    init(generated text: Substring) {
        var rest = text
        var defaulted = false
        var closure = false
        while let first = rest.first, first == "?" || first == "^" {
            if first == "?" { defaulted = true } else { closure = true }
            rest = rest.dropFirst()
        }
        self.label = String(rest)
        self.defaulted = defaulted
        self.closure = closure
    }
}

/// One API whose availability the check enforces.
public struct Symbol: Hashable, Sendable {
    /// The declared name: a type, global function, macro, member or `init`.
    public let name: String
    /// The type that declares it (`String` for `String.init(validating:as:)`), nil at top level,
    /// or `"*"` for a member matched on a receiver of unknown type and as an implicit member
    /// (`manager.foo`, `.foo`), which the table lists only for names that every declaration in
    /// the SDK's modules introduces after the deployment targets.
    public let base: String?
    /// A function's or initializer's parameters; nil for a type, property or case.
    public let parameters: [Parameter]?
    /// For a `"*"` member: the first argument label it is reached with, `.` for a property or
    /// case, `_` for an unlabelled first argument.
    public let firstLabel: String?
    /// The modules that declare it; outside the standard library a file must import one of them
    /// (or a module that makes it visible) for a reference to count.
    public let modules: [String]
    /// Apple's availability of the declaration.
    public let availability: Availability
    /// Where the availability comes from.
    public let source: String

    /// A table entry.
    public init(
        _ name: String, base: String? = nil, parameters: [Parameter]? = nil, firstLabel: String? = nil, modules: [String],
        _ availability: Availability, source: String
    ) {
        self.name = name
        self.base = base
        self.parameters = parameters
        self.firstLabel = firstLabel
        self.modules = modules
        self.availability = availability
        self.source = source
    }

    /// How a finding names it: `String(validating:as:)`, `Task.sleep(for:)`, `CLMonitor`, `.foo(bar:)`.
    public var displayName: String {
        var text: String
        switch base {
        case nil: text = name
        case "*": text = "." + name
        case let owner?: text = name == "init" ? owner : "\(owner).\(name)"
        }
        if let parameters, !(name != "init" && parameters.isEmpty) {
            text += "(" + parameters.map { "\($0.label):" }.joined() + ")"
        } else if let firstLabel, firstLabel != "." {
            text += firstLabel == ")" ? "()" : "(\(firstLabel):…)"
        }
        return text
    }
}

/// The symbols the check knows and which modules make which visible, with lookups by name.
///
/// The entries are generated from an Apple SDK by `Tools/AvailabilityCheck/generate-table.py`
/// (`GeneratedSymbolTable.swift`, whose header names the SDK, the date and the command);
/// `macOSSupplement` adds the few facts an iOS SDK cannot give (below).
public struct SymbolTable: Sendable {
    /// Every entry.
    public let symbols: [Symbol]
    /// The modules an `import` of a module makes visible (besides itself).
    public let visibility: [String: Set<String>]
    /// Entries declared in a type, by `owner` + NUL + `name`.
    let members: [String: [Symbol]]
    /// Entries declared at top level, by name.
    let topLevel: [String: [Symbol]]
    /// `"*"` entries, by name.
    let anyReceiver: [String: [Symbol]]

    /// A table of these entries.
    public init(symbols: [Symbol], visibility: [String: Set<String>]) {
        self.symbols = symbols
        self.visibility = visibility
        var members: [String: [Symbol]] = [:]
        var topLevel: [String: [Symbol]] = [:]
        var anyReceiver: [String: [Symbol]] = [:]
        for symbol in symbols {
            switch symbol.base {
            case nil: topLevel[symbol.name, default: []].append(symbol)
            case "*": anyReceiver[symbol.name, default: []].append(symbol)
            case let owner?: members[owner + "\u{0}" + symbol.name, default: []].append(symbol)
            }
        }
        self.members = members
        self.topLevel = topLevel
        self.anyReceiver = anyReceiver
    }

    /// The declarations of `name` in `owner`.
    func members(of owner: String, named name: String) -> [Symbol] { members[owner + "\u{0}" + name] ?? [] }

    /// The generated table plus the supplement.
    public static let standard: SymbolTable = {
        let generated = parse(generated: generatedText)
        return SymbolTable(symbols: generated.symbols + macOSSupplement, visibility: generated.visibility)
    }()

    /// Every entry of the standard table.
    public static var all: [Symbol] { standard.symbols }

    /// Parses the generator's lines (see generate-table.py): `D`, `A` and `R`.
    public static func parse(generated text: String) -> SymbolTable {
        var symbols: [Symbol] = []
        var visibility: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") {
            var fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            // Trailing empty fields ("" = unrestricted) survive an editor that strips trailing tabs.
            let width = ["R": 3, "D": 7, "A": 6][fields[0]] ?? 0
            while fields.count < width { fields.append("") }
            switch fields.first {
            case "R" where fields.count == 3:
                visibility[fields[1]] = Set(fields[2].split(separator: ",").map(String.init))
            case "D" where fields.count == 7:
                let parameters: [Parameter]? =
                    fields[4].isEmpty ? nil : fields[4].dropFirst().dropLast().split(separator: ",").map(Parameter.init(generated:))
                symbols.append(
                    Symbol(
                        fields[3], base: fields[2].isEmpty ? nil : fields[2], parameters: parameters, modules: [fields[1]],
                        availability(iOS: fields[5], macOS: fields[6]),
                        source: "\(generatedProvenance): \(fields[1]), iOS \(describe(fields[5])), macOS \(describe(fields[6]))"))
            case "A" where fields.count == 6:
                let modules = fields[1].split(separator: ",").map(String.init)
                symbols.append(
                    Symbol(
                        fields[2], base: "*", firstLabel: fields[3], modules: modules, availability(iOS: fields[4], macOS: fields[5]),
                        source:
                            "\(generatedProvenance): every `\(fields[2])` of \(fields[1]), iOS \(describe(fields[4])), macOS \(describe(fields[5]))"
                    ))
            default: continue
            }
        }
        return SymbolTable(symbols: symbols, visibility: visibility)
    }

    /// A generated pair of versions: "" unrestricted, "-" unavailable, "?" not stated, else a version.
    static func availability(iOS: String, macOS: String) -> Availability {
        var availability = Availability()
        for (platform, text) in [(ApplePlatform.iOS, iOS), (.macOS, macOS)] {
            if text == "-" {
                availability.unavailable.insert(platform)
            } else if let version = Version(text) {
                availability.introduced[platform] = version
            }
        }
        return availability
    }

    static func describe(_ text: String) -> String {
        switch text {
        case "": return "any"
        case "-": return "unavailable"
        case "?": return "not stated"
        default: return text
        }
    }

    /// What an iOS SDK cannot say: the Clang importer of an iOS SDK prints no macOS availability
    /// for Objective-C declarations, so their `API_UNAVAILABLE(macos)` is not in the generated
    /// table. These are the ones the SDK's Apple glue uses, read from Apple's iPhoneOS18.0.sdk
    /// headers (Xcode 16.0); the macOS run of `.github/workflows/apple.yml` stays the authority.
    public static let macOSSupplement: [Symbol] = [
        Symbol(
            "authorizedWhenInUse", base: "CLAuthorizationStatus", modules: ["CoreLocation"], .init(unavailable: [.macOS]),
            source: "iPhoneOS18.0.sdk CoreLocation.framework/Headers/CLLocationManager.h: "
                + "`kCLAuthorizationStatusAuthorizedWhenInUse API_AVAILABLE(ios(8.0)) API_UNAVAILABLE(macos)`"),
        Symbol(
            "authorizedWhenInUse", base: "*", firstLabel: ".", modules: ["CoreLocation"], .init(unavailable: [.macOS]),
            source: "iPhoneOS18.0.sdk CoreLocation.framework/Headers/CLLocationManager.h: "
                + "`kCLAuthorizationStatusAuthorizedWhenInUse API_AVAILABLE(ios(8.0)) API_UNAVAILABLE(macos)`"),
        Symbol(
            "showsBackgroundLocationIndicator", base: "*", firstLabel: ".", modules: ["CoreLocation"], .init(unavailable: [.macOS]),
            source: "iPhoneOS18.0.sdk CoreLocation.framework/Headers/CLLocationManager.h: "
                + "`showsBackgroundLocationIndicator API_AVAILABLE(ios(11.0)) API_UNAVAILABLE(macos) API_UNAVAILABLE(watchos, tvos)`"),
        Symbol(
            "BGTaskScheduler", modules: ["BackgroundTasks"], .init(unavailable: [.macOS]),
            source: "iPhoneOS18.0.sdk BackgroundTasks.framework/Headers/BGTaskScheduler.h: "
                + "`BG_EXTERN API_AVAILABLE(ios(13.0), tvos(13.0)) API_UNAVAILABLE(macos) API_UNAVAILABLE(watchos)`"),
    ]
}
