// availability-check [--manifest Package.swift] [--ios X] [--macos Y] [--list] PATH…
// Checks every .swift file under the PATHs for the Apple platforms the manifest declares;
// prints one line per unguarded use and exits 1 when there is any.
import AvailabilityCheckCore
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
var manifest = "Package.swift"
var overrides: [ApplePlatform: Version] = [:]
var paths: [String] = []
var list = false
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--manifest": manifest = arguments.removeFirst()
    case "--ios": overrides[.iOS] = Version(arguments.removeFirst())
    case "--macos": overrides[.macOS] = Version(arguments.removeFirst())
    case "--list": list = true
    default: paths.append(argument)
    }
}

if list {
    for symbol in SymbolTable.all {
        let versions = symbol.availability.introduced.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }
        let unavailable = symbol.availability.unavailable.sorted().map { "\($0.rawValue) unavailable" }
        print("\(symbol.displayName)\t\((versions + unavailable).joined(separator: ", "))\t\(symbol.source)")
    }
    exit(0)
}

guard let manifestText = try? String(contentsOfFile: manifest, encoding: .utf8) else {
    FileHandle.standardError.write("availability-check: cannot read \(manifest)\n".data(using: .utf8)!)
    exit(2)
}
var deployment = Manifest.deploymentTargets(packageSwift: manifestText)
deployment.merge(overrides) { _, new in new }
guard !deployment.isEmpty else {
    FileHandle.standardError.write("availability-check: \(manifest) declares no iOS/macOS platform\n".data(using: .utf8)!)
    exit(2)
}

/// Every .swift file under `path` (a file itself when it is one); nil when nothing is there.
func swiftFiles(under path: String) -> [String]? {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return nil }
    if !isDirectory.boolValue { return [path] }
    var found: [String] = []
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let relative = enumerator?.nextObject() as? String {
        if relative.hasSuffix(".swift") { found.append(path + "/" + relative) }
    }
    return found
}

// What the manifest's local packages (`.package(path:)`) declare is the checked code's too: the
// sample's `.insufficientlyInUse` is the SDK's `LocationHealth`, not CoreLocation's.
let manifestDirectory = (manifest as NSString).deletingLastPathComponent
var declarationFiles: [String] = []
for match in manifestText.matches(of: #/\.package\(\s*(?:name:\s*"[^"]*",\s*)?path:\s*"([^"]+)"/#) {
    let sources = (manifestDirectory.isEmpty ? "." : manifestDirectory) + "/" + match.1 + "/Sources"
    declarationFiles += (swiftFiles(under: sources) ?? []).filter { !$0.contains("/.build/") }
}

var files: [String] = []
for path in paths {
    guard let found = swiftFiles(under: path) else {
        FileHandle.standardError.write("availability-check: no such path \(path)\n".data(using: .utf8)!)
        exit(2)
    }
    files += found
}
files.sort()

let checker = AvailabilityChecker(deployment: deployment)
let report = try checker.check(files: files, declarationsFrom: declarationFiles.sorted()) {
    try String(contentsOfFile: $0, encoding: .utf8)
}
for finding in report.findings { print(finding) }
let targets = deployment.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
print(
    "availability check: \(report.files) files, \(report.references) references to \(SymbolTable.all.count) table symbols "
        + "(\(SymbolTable.generatedProvenance)) checked for \(targets): \(report.findings.count) unguarded")
exit(report.findings.isEmpty ? 0 : 1)
