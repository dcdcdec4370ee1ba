import AvailabilityCheckCore
import Foundation
import Testing

/// Issue 27: every standard-library entry of the table matches the Swift toolchain's own
/// interface file it cites (the interfaces carry Apple's platform availability), so the table
/// cannot drift from the declarations it quotes.
@Suite struct SymbolTableTests {
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

    @Test func standardLibraryEntriesMatchTheToolchainInterfaces() throws {
        #if os(Linux)
            let lib = try #require(Self.toolchainLib(), "swift not found on PATH")
            for symbol in SymbolTable.stdlib {
                // "<…> <Module>.swiftmodule: `@available(…) <declaration>`"
                let module = try #require(
                    symbol.source.components(separatedBy: ".swiftmodule").first?.components(separatedBy: "/").last?
                        .components(separatedBy: " ").last)
                let quoted = try #require(symbol.source.components(separatedBy: "`").dropFirst().first, "\(symbol.displayName)")
                let annotationEnd = try #require(quoted.range(of: ")"))
                let annotation = String(quoted[..<annotationEnd.upperBound])
                let declaration = try #require(
                    quoted[annotationEnd.upperBound...].components(separatedBy: "…").map { $0.trimmingCharacters(in: .whitespaces) }
                        .max { $0.count < $1.count })
                let lines = try #require(Self.interface(module: module, lib: lib), "no interface for \(module)")
                let index = try #require(
                    lines.firstIndex { $0.contains(declaration) }, "\(symbol.displayName): `\(declaration)` not in \(module)")
                let preceding = lines[max(0, index - 6)...index].reversed().map { $0.trimmingCharacters(in: .whitespaces) }
                let found = try #require(preceding.first { $0.hasPrefix("@available(macOS") }, "\(symbol.displayName)")
                #expect(found == annotation, "\(symbol.displayName)")
                let parsed = Availability(arguments: String(annotation.dropFirst("@available(".count).dropLast()))
                #expect(parsed.introduced == symbol.availability.introduced, "\(symbol.displayName)")
            }
        #endif
    }

    @Test func everyEntryCitesWhereItsAvailabilityComesFrom() {
        for symbol in SymbolTable.all {
            #expect(symbol.source.contains("`"), "\(symbol.displayName) quotes no annotation")
            #expect(
                symbol.source.contains(".h") || symbol.source.contains("swiftinterface") || symbol.source.contains("swiftmodule")
                    || symbol.source.contains("swift-foundation") || symbol.source.contains("CLLocationUpdate"),
                "\(symbol.displayName) names no file")
            #expect(!symbol.availability.introduced.isEmpty || !symbol.availability.unavailable.isEmpty)
        }
    }
}
