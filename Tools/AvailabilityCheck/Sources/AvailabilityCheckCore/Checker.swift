import SwiftParser
import SwiftSyntax

/// A use of a table symbol that the deployment target does not cover on one platform.
public struct Finding: Hashable, Sendable, CustomStringConvertible {
    /// File, 1-based line and column.
    public let file: String
    public let line: Int
    public let column: Int
    /// The symbol as written in the table.
    public let symbol: String
    /// The platform it fails on.
    public let platform: ApplePlatform
    /// What is wrong and how to guard it.
    public let message: String
    /// The table entry's citation.
    public let source: String

    public var description: String { "\(file):\(line):\(column): error: \(message) [\(source)]" }
}

/// The result of checking files: findings plus how many symbol references were seen.
public struct Report: Sendable {
    /// Unguarded uses.
    public var findings: [Finding] = []
    /// References to table symbols, guarded or not, per platform.
    public var references = 0
    /// Files parsed.
    public var files = 0
}

/// Checks Swift sources against the deployment targets and the symbol table.
public struct AvailabilityChecker: Sendable {
    /// The minimum version of each Apple platform the package declares.
    public let deployment: [ApplePlatform: Version]
    /// The symbols enforced.
    public let symbols: [Symbol]

    /// A checker for these deployment targets.
    public init(deployment: [ApplePlatform: Version], symbols: [Symbol] = SymbolTable.all) {
        self.deployment = deployment
        self.symbols = symbols
    }

    /// Checks one source text (tests plant misuses through this).
    public func check(source: String, file: String = "input.swift") -> Report {
        var report = Report()
        report.files = 1
        let tree = Parser.parse(source: source)
        let converter = SourceLocationConverter(fileName: file, tree: tree)
        var seen = Set<Finding>()
        for platform in deployment.keys.sorted() {
            let visitor = UseVisitor(
                platform: platform, deployment: deployment[platform]!, symbols: symbols, file: file, converter: converter)
            visitor.walk(tree)
            report.references += visitor.references
            for finding in visitor.findings where seen.insert(finding).inserted { report.findings.append(finding) }
        }
        return report
    }

    /// Checks files (paths as given are used in the findings).
    public func check(files: [String], read: (String) throws -> String) rethrows -> Report {
        var total = Report()
        for file in files {
            let one = check(source: try read(file), file: file)
            total.findings += one.findings
            total.references += one.references
            total.files += 1
        }
        return total
    }
}

/// Modules whose import makes another module's declarations visible (a framework re-exporting Foundation).
let reexports: [String: Set<String>] = [
    "CoreLocation": ["Foundation"], "UIKit": ["Foundation"], "CoreMotion": ["Foundation"], "BackgroundTasks": ["Foundation"],
    "MapKit": ["Foundation", "CoreLocation"], "SwiftUI": ["Foundation", "Observation"], "Security": ["Foundation"],
    "FoundationEssentials": ["Foundation"],
]

/// Walks one file for one platform, skipping inactive `#if` clauses, and records every
/// reference to a table symbol whose availability the enclosing context does not cover.
final class UseVisitor: SyntaxVisitor {
    let platform: ApplePlatform
    let deployment: Version
    let file: String
    let converter: SourceLocationConverter
    let condition: BuildCondition
    private var byName: [String: [Symbol]] = [:]
    private var imports: Set<String> = ["Swift", "_Concurrency", "_StringProcessing"]
    var findings: [Finding] = []
    var references = 0

    init(platform: ApplePlatform, deployment: Version, symbols: [Symbol], file: String, converter: SourceLocationConverter) {
        self.platform = platform
        self.deployment = deployment
        self.file = file
        self.converter = converter
        self.condition = BuildCondition(platform: platform)
        for symbol in symbols { byName[symbol.name, default: []].append(symbol) }
        super.init(viewMode: .sourceAccurate)
    }

    // MARK: #if

    override func visit(_ node: IfConfigDeclSyntax) -> SyntaxVisitorContinueKind {
        for clause in node.clauses {
            let truth = clause.condition.map(condition.evaluate) ?? .yes
            if truth == .no { continue }
            if let elements = clause.elements { walk(elements) }
            if truth == .yes { break }
        }
        return .skipChildren
    }

    // MARK: imports

    override func visit(_ node: ImportDeclSyntax) -> SyntaxVisitorContinueKind {
        if let module = node.path.first?.name.text {
            imports.insert(module)
            imports.formUnion(reexports[module] ?? [])
            if module == "UIKit", platform == .macOS {
                report(
                    node, name: "import UIKit", message: "UIKit does not exist on macOS: guard the file with `#if canImport(UIKit)`",
                    source: "macOS SDK: no UIKit module (Mac Catalyst excluded)")
            }
        }
        return .skipChildren
    }

    // MARK: references

    override func visit(_ node: IdentifierTypeSyntax) -> SyntaxVisitorContinueKind {
        match(name: node.name.text, base: nil, at: Syntax(node))
        return .visitChildren
    }

    override func visit(_ node: MemberTypeSyntax) -> SyntaxVisitorContinueKind {
        if let base = node.baseType.as(IdentifierTypeSyntax.self) {
            if moduleNames.contains(base.name.text) {
                match(name: node.name.text, base: nil, at: Syntax(node))
            } else {
                match(name: node.name.text, base: base.name.text, at: Syntax(node))
            }
        }
        return .visitChildren
    }

    override func visit(_ node: MacroExpansionExprSyntax) -> SyntaxVisitorContinueKind {
        match(name: node.macroName.text, base: nil, at: Syntax(node))
        return .visitChildren
    }

    override func visit(_ node: MacroExpansionDeclSyntax) -> SyntaxVisitorContinueKind {
        match(name: node.macroName.text, base: nil, at: Syntax(node))
        return .visitChildren
    }

    override func visit(_ node: DeclReferenceExprSyntax) -> SyntaxVisitorContinueKind {
        if let member = node.parent?.as(MemberAccessExprSyntax.self), member.declName.id == node.id { return .visitChildren }
        let name = node.baseName.text
        match(name: name, base: nil, at: Syntax(node))
        // An initializer written as a call on the type: `URL(filePath:)`.
        if let call = node.parent?.as(FunctionCallExprSyntax.self), call.calledExpression.id == ExprSyntax(node).id {
            match(name: name, base: name, at: Syntax(node), label: call.arguments.first?.label?.text)
        }
        return .visitChildren
    }

    override func visit(_ node: MemberAccessExprSyntax) -> SyntaxVisitorContinueKind {
        let name = node.declName.baseName.text
        let label = callLabel(of: node)
        guard let base = node.base else {
            match(name: name, base: nil, at: Syntax(node), label: label, implicit: true)
            return .visitChildren
        }
        if let reference = base.as(DeclReferenceExprSyntax.self) {
            if moduleNames.contains(reference.baseName.text) {
                match(name: name, base: nil, at: Syntax(node))
            } else {
                match(name: name, base: reference.baseName.text, at: Syntax(node), label: label)
            }
        }
        match(name: name, base: "*", at: Syntax(node), label: label)
        return .visitChildren
    }

    private let moduleNames: Set<String> = [
        "Swift", "_Concurrency", "Foundation", "CoreLocation", "Synchronization", "Observation", "BackgroundTasks",
    ]

    /// The first argument label of the call `node` is the callee of, or of `name(label:)`.
    private func callLabel(of node: MemberAccessExprSyntax) -> String? {
        if let names = node.declName.argumentNames { return names.arguments.first?.name.text }
        if let call = node.parent?.as(FunctionCallExprSyntax.self), call.calledExpression.id == ExprSyntax(node).id {
            return call.arguments.first?.label?.text ?? "_"
        }
        return nil
    }

    private func match(name: String, base: String?, at node: Syntax, label: String? = nil, implicit: Bool = false) {
        guard let candidates = byName[name] else { return }
        for symbol in candidates {
            if implicit {
                guard symbol.implicitMember else { continue }
            } else {
                guard symbol.base == base else { continue }
            }
            if let expected = symbol.label, let label, label != expected { continue }
            if symbol.label != nil, label == nil, symbol.base == symbol.name { continue }
            guard imports.contains(symbol.module) || symbol.module == "Swift" else { continue }
            check(symbol, at: node)
        }
    }

    private func check(_ symbol: Symbol, at node: Syntax) {
        references += 1
        guard let context = AvailabilityContext.of(node, platform: platform, deployment: deployment) else { return }
        if symbol.availability.unavailable.contains(platform) {
            report(
                node, name: symbol.displayName,
                message:
                    "`\(symbol.displayName)` is unavailable on \(platform.rawValue): exclude it with `#if os(iOS)` (or canImport) or mark the enclosing declaration `@available(\(platform.rawValue), unavailable)`",
                source: symbol.source)
            return
        }
        guard let required = symbol.availability.introduced[platform], required > context else { return }
        report(
            node, name: symbol.displayName,
            message:
                "`\(symbol.displayName)` is only available in \(platform.rawValue) \(required) or newer (deployment target \(deployment)): guard it with `if #available(\(platform.rawValue) \(required), *)` or `@available`",
            source: symbol.source)
    }

    private func report(_ node: some SyntaxProtocol, name: String, message: String, source: String) {
        let location = converter.location(for: node.positionAfterSkippingLeadingTrivia)
        findings.append(
            Finding(
                file: file, line: location.line, column: location.column, symbol: name, platform: platform, message: message,
                source: source))
    }
}
