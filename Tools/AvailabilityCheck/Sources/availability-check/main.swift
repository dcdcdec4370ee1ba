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

var files: [String] = []
for path in paths {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        FileHandle.standardError.write("availability-check: no such path \(path)\n".data(using: .utf8)!)
        exit(2)
    }
    if !isDirectory.boolValue {
        files.append(path)
        continue
    }
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let relative = enumerator?.nextObject() as? String {
        if relative.hasSuffix(".swift") { files.append(path + "/" + relative) }
    }
}
files.sort()

let checker = AvailabilityChecker(deployment: deployment)
let report = try checker.check(files: files) { try String(contentsOfFile: $0, encoding: .utf8) }
for finding in report.findings { print(finding) }
let targets = deployment.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
print(
    "availability check: \(report.files) files, \(report.references) references to \(SymbolTable.all.count) table symbols "
        + "checked for \(targets): \(report.findings.count) unguarded")
exit(report.findings.isEmpty ? 0 : 1)
