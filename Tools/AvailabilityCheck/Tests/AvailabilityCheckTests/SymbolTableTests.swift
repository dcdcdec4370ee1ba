import AvailabilityCheckCore
import Foundation
import Testing

/// Issue 48: the table is the one generated from Apple's SDK (GeneratedSymbolTable.swift, by
/// generate-table.py); it parses whole, says where it comes from, and holds what the SDK says
/// about the APIs the package's history tripped on. Its standard-library entries also agree with
/// the Swift toolchain's own interfaces, which carry Apple's platform availability verbatim.
@Suite struct SymbolTableTests {
    static let table = SymbolTable.standard

    static func find(_ name: String, base: String? = nil, labels: [String]? = nil) -> [Symbol] {
        table.symbols.filter { $0.name == name && $0.base == base && (labels == nil || $0.parameters?.map(\.label) == labels) }
    }

    @Test func theGeneratedTableParsesWholeAndSaysWhereItComesFrom() throws {
        let source = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../Sources/AvailabilityCheckCore/GeneratedSymbolTable.swift"), encoding: .utf8)
        let lines = source.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let entries = lines.filter { $0.hasPrefix("D\t") || $0.hasPrefix("A\t") }.count
        #expect(entries > 1_000)
        #expect(Self.table.symbols.count == entries + SymbolTable.macOSSupplement.count, "every D and A line parses")
        #expect(lines.contains { $0.hasPrefix("// SDK: iOS 18.6 (iPhoneOS18.6.sdk") })
        #expect(lines.contains { $0.hasPrefix("//   Tools/AvailabilityCheck/generate-table.py --sdk ") })
        #expect(SymbolTable.generatedProvenance.contains("iOS 18.6"))
        #expect(Self.table.visibility["CoreLocation"]?.contains("Foundation") == true)
        #expect(
            Self.table.symbols.allSatisfy { !$0.availability.introduced.isEmpty || !$0.availability.unavailable.isEmpty || $0.base != "*" })
    }

    @Test func theSDKsWordOnTheAPIsOfIssues27And48() throws {
        let validating = try #require(Self.find("init", base: "String", labels: ["validating", "as"]).first)
        #expect(validating.availability.introduced == [.iOS: Version("18.0")!, .macOS: Version("15.0")!])
        // Its neighbours of the same name that are not new are there too, so they are not flagged.
        let cString = try #require(Self.find("init", base: "String", labels: ["validatingCString"]).first)
        #expect(cString.availability.introduced.isEmpty)
        let monitor = try #require(Self.find("CLMonitor").first)
        #expect(monitor.availability.introduced == [.iOS: Version("17.0")!, .macOS: Version("14.0")!])
        let session = try #require(Self.find("CLServiceSession").first)
        #expect(session.availability.introduced[.iOS] == Version("18.0"))
        #expect(session.availability.unavailable == [.macOS])
        // Introduced at the deployment target: not in the table (nothing to check).
        #expect(Self.find("Duration").isEmpty)
        #expect(Self.find("sleep", base: "Task").allSatisfy { $0.availability.introduced[.iOS] != Version("16.0") })
    }

    /// The toolchain's `usr/lib` (from the `swift` on PATH), or nil when it cannot be found.
    static func toolchainLib() -> URL? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("swift")
            guard FileManager.default.isExecutableFile(atPath: candidate.path) else { continue }
            let resolved = candidate.resolvingSymlinksInPath()
            return resolved.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("lib")
        }
        return nil
    }

    static func interface(module: String, lib: URL) -> [String]? {
        for folder in ["swift_static/linux", "swift/linux"] {
            let directory = lib.appendingPathComponent(folder).appendingPathComponent("\(module).swiftmodule")
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path),
                let name = names.first(where: { $0.hasSuffix(".swiftinterface") && !$0.contains(".private.") }),
                let text = try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            else { continue }
            return text.components(separatedBy: "\n")
        }
        return nil
    }

    /// Every standard-library type of the table that the Linux toolchain's interface also declares
    /// at top level has the same iOS and macOS versions there (the generator read them right).
    @Test func standardLibraryTypesAgreeWithTheToolchainInterfaces() throws {
        #if os(Linux)
            let lib = try #require(Self.toolchainLib(), "swift not found on PATH")
            var compared: [String] = []
            for module in ["Swift", "_Concurrency"] {
                let lines = try #require(Self.interface(module: module, lib: lib), "no interface for \(module)")
                let types = Self.table.symbols.filter { $0.modules == [module] && $0.base == nil && $0.parameters == nil }
                for symbol in types {
                    let pattern = try Regex("^public (final )?(struct|protocol|class|enum|actor) \(symbol.name)\\b")
                    guard let index = lines.firstIndex(where: { $0.contains(pattern) }) else { continue }
                    let above = lines[max(0, index - 4)..<index].reversed().first { $0.hasPrefix("@available(macOS") }
                    guard let above else { continue }
                    let parsed = Availability(arguments: String(above.dropFirst("@available(".count).dropLast()))
                    #expect(parsed.introduced == symbol.availability.introduced, "\(symbol.displayName): \(above)")
                    compared.append(symbol.name)
                }
            }
            #expect(compared.count >= 3, "compared \(compared)")
            print("standard-library types compared with the toolchain: \(compared.sorted())")
        #endif
    }
}
