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
    public let table: SymbolTable

    /// A checker for these deployment targets.
    public init(deployment: [ApplePlatform: Version], table: SymbolTable = .standard) {
        self.deployment = deployment
        self.table = table
    }

    /// Checks one source text (tests plant misuses through this); its own declarations shadow
    /// the table's names as a project's do.
    public func check(source: String, file: String = "input.swift") -> Report {
        let tree = Parser.parse(source: source)
        return check(tree, file: file, project: ProjectDeclarations(trees: [tree]))
    }

    func check(_ tree: SourceFileSyntax, file: String, project: ProjectDeclarations) -> Report {
        var report = Report()
        report.files = 1
        let converter = SourceLocationConverter(fileName: file, tree: tree)
        var seen = Set<Finding>()
        for platform in deployment.keys.sorted() {
            let visitor = UseVisitor(
                platform: platform, deployment: deployment[platform]!, table: table, project: project, file: file,
                converter: converter)
            visitor.walk(tree)
            report.references += visitor.references
            for finding in visitor.findings where seen.insert(finding).inserted { report.findings.append(finding) }
        }
        return report
    }

    /// Checks files (paths as given are used in the findings). What the files declare, and what
    /// `declarationsFrom` declares (the sources of local packages the checked code depends on,
    /// which are not checked here), shadows the table: a project type, or a member the project
    /// declares, is never taken for Apple's.
    public func check(files: [String], declarationsFrom others: [String] = [], read: (String) throws -> String) rethrows -> Report {
        var trees: [(file: String, tree: SourceFileSyntax)] = []
        for file in files { trees.append((file, Parser.parse(source: try read(file)))) }
        var declaring = trees.map(\.tree)
        for file in others { declaring.append(Parser.parse(source: try read(file))) }
        let project = ProjectDeclarations(trees: declaring)
        var total = Report()
        for (file, tree) in trees {
            let one = check(tree, file: file, project: project)
            total.findings += one.findings
            total.references += one.references
            total.files += 1
        }
        return total
    }
}

/// Modules whose import makes another visible, beyond what the generated table says.
let extraVisibility: [String: Set<String>] = ["FoundationEssentials": ["Foundation"]]

/// Names the checked sources declare themselves: types, top-level functions and variables,
/// and members (of their own types and in extensions of others'). A name declared here is
/// never taken for Apple's (a project's `Predicate`, its own `foo(bar:)` on some value).
struct ProjectDeclarations: Sendable {
    var types: Set<String> = []
    var topLevel: Set<String> = []
    var memberNames: Set<String> = []
    /// owner + NUL + name.
    var members: Set<String> = []

    init(trees: [SourceFileSyntax]) {
        let collector = DeclarationCollector()
        for tree in trees { collector.walk(tree) }
        self = collector.result
    }

    fileprivate init() {}
}

private final class DeclarationCollector: SyntaxVisitor {
    var result = ProjectDeclarations()
    var owners: [String] = []

    init() { super.init(viewMode: .sourceAccurate) }

    func declare(_ name: String) {
        if let owner = owners.last {
            result.memberNames.insert(name)
            result.members.insert(owner + "\u{0}" + name)
        } else {
            result.topLevel.insert(name)
        }
    }

    func enter(_ name: String) -> SyntaxVisitorContinueKind {
        result.types.insert(name)
        declare(name)
        owners.append(name)
        return .visitChildren
    }

    override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind { enter(node.name.text) }
    override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind { enter(node.name.text) }
    override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind { enter(node.name.text) }
    override func visit(_ node: ActorDeclSyntax) -> SyntaxVisitorContinueKind { enter(node.name.text) }
    override func visit(_ node: ProtocolDeclSyntax) -> SyntaxVisitorContinueKind { enter(node.name.text) }
    override func visit(_ node: ExtensionDeclSyntax) -> SyntaxVisitorContinueKind {
        let extended = node.extendedType.trimmedDescription
        let base = extended.split(separator: "<").first.map(String.init) ?? extended
        owners.append(base.split(separator: ".").last.map(String.init) ?? base)
        return .visitChildren
    }
    override func visitPost(_ node: StructDeclSyntax) { owners.removeLast() }
    override func visitPost(_ node: ClassDeclSyntax) { owners.removeLast() }
    override func visitPost(_ node: EnumDeclSyntax) { owners.removeLast() }
    override func visitPost(_ node: ActorDeclSyntax) { owners.removeLast() }
    override func visitPost(_ node: ProtocolDeclSyntax) { owners.removeLast() }
    override func visitPost(_ node: ExtensionDeclSyntax) { owners.removeLast() }

    override func visit(_ node: TypeAliasDeclSyntax) -> SyntaxVisitorContinueKind {
        result.types.insert(node.name.text)
        declare(node.name.text)
        return .skipChildren
    }

    override func visit(_ node: FunctionDeclSyntax) -> SyntaxVisitorContinueKind {
        declare(node.name.text)
        return .visitChildren  // for the tuple labels of its signature and body
    }

    override func visit(_ node: InitializerDeclSyntax) -> SyntaxVisitorContinueKind {
        declare("init")
        return .visitChildren
    }

    /// `(time: Date, value: Int)` and `(time: t, value: v)`: `$0.time` is the project's own.
    override func visit(_ node: TupleTypeElementSyntax) -> SyntaxVisitorContinueKind {
        if let name = node.firstName, name.tokenKind != .wildcard { result.memberNames.insert(name.text) }
        return .visitChildren
    }

    override func visit(_ node: TupleExprSyntax) -> SyntaxVisitorContinueKind {
        for element in node.elements { if let label = element.label { result.memberNames.insert(label.text) } }
        return .visitChildren
    }

    override func visit(_ node: EnumCaseElementSyntax) -> SyntaxVisitorContinueKind {
        declare(node.name.text)
        return .skipChildren
    }

    override func visit(_ node: VariableDeclSyntax) -> SyntaxVisitorContinueKind {
        // Properties of types and globals, not the locals of a body.
        let inType = node.parent?.is(MemberBlockItemSyntax.self) == true
        let global = node.parent?.parent?.parent?.is(SourceFileSyntax.self) == true
        if inType || global {
            for binding in node.bindings {
                if let pattern = binding.pattern.as(IdentifierPatternSyntax.self) { declare(pattern.identifier.text) }
            }
        }
        return .visitChildren
    }
}

/// A call's argument list as written: labels (`_` for none), then trailing closures (the first
/// unlabelled, nil; the others with their labels).
struct CallShape {
    var labels: [String]
    var trailing: [String?]

    init?(_ call: FunctionCallExprSyntax?) {
        guard let call else { return nil }
        labels = call.arguments.map { $0.label?.text ?? "_" }
        trailing = (call.trailingClosure == nil ? [] : [nil]) + call.additionalTrailingClosures.map { $0.label.text }
    }

    init(labels: [String]) {
        self.labels = labels
        trailing = []
    }

    /// Whether a function with `parameters` accepts this argument list: defaulted parameters
    /// may be left out, trailing closures fill closure parameters.
    func fits(_ parameters: [Parameter]) -> Bool {
        let arguments: [(label: String?, trailing: Bool)] = labels.map { ($0, false) } + trailing.map { ($0, true) }
        func match(_ p: Int, _ a: Int) -> Bool {
            if a == arguments.count { return parameters[p...].allSatisfy(\.defaulted) }
            guard p < parameters.count else { return false }
            let parameter = parameters[p]
            let argument = arguments[a]
            if argument.trailing {
                if parameter.closure, argument.label == nil || argument.label == parameter.label, match(p + 1, a + 1) { return true }
            } else if argument.label == parameter.label, match(p + 1, a + 1) {
                return true
            }
            return parameter.defaulted && match(p + 1, a)
        }
        return match(0, 0)
    }

    /// The first argument's label as the `"*"` entries key it (`_` unlabelled, `)` no argument);
    /// nil when the first argument is a trailing closure, whose label is not written.
    var firstLabel: String? {
        if let first = labels.first { return first }
        return trailing.isEmpty ? ")" : nil
    }
}

/// Walks one file for one platform, skipping inactive `#if` clauses, and records every
/// reference to a table symbol whose availability the enclosing context does not cover.
final class UseVisitor: SyntaxVisitor {
    let platform: ApplePlatform
    let deployment: Version
    let file: String
    let converter: SourceLocationConverter
    let condition: BuildCondition
    let table: SymbolTable
    let project: ProjectDeclarations
    private var imports: Set<String> = ["Swift", "_Concurrency", "_StringProcessing"]
    var findings: [Finding] = []
    var references = 0

    init(
        platform: ApplePlatform, deployment: Version, table: SymbolTable, project: ProjectDeclarations, file: String,
        converter: SourceLocationConverter
    ) {
        self.platform = platform
        self.deployment = deployment
        self.file = file
        self.converter = converter
        self.table = table
        self.project = project
        self.condition = BuildCondition(platform: platform)
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
            imports.formUnion(table.visibility[module] ?? [])
            imports.formUnion(extraVisibility[module] ?? [])
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
        topLevel(node.name.text, at: Syntax(node))
        return .visitChildren
    }

    override func visit(_ node: MemberTypeSyntax) -> SyntaxVisitorContinueKind {
        if let base = node.baseType.as(IdentifierTypeSyntax.self) {
            if moduleNames.contains(base.name.text) {
                topLevel(node.name.text, at: Syntax(node))
            } else {
                member(node.name.text, of: base.name.text, at: Syntax(node), call: nil)
            }
        }
        return .visitChildren
    }

    override func visit(_ node: MacroExpansionExprSyntax) -> SyntaxVisitorContinueKind {
        topLevel(node.macroName.text, at: Syntax(node))
        return .visitChildren
    }

    override func visit(_ node: MacroExpansionDeclSyntax) -> SyntaxVisitorContinueKind {
        topLevel(node.macroName.text, at: Syntax(node))
        return .visitChildren
    }

    override func visit(_ node: DeclReferenceExprSyntax) -> SyntaxVisitorContinueKind {
        if let member = node.parent?.as(MemberAccessExprSyntax.self), member.declName.id == node.id { return .visitChildren }
        let name = node.baseName.text
        let call = node.parent?.as(FunctionCallExprSyntax.self).flatMap { $0.calledExpression.id == ExprSyntax(node).id ? $0 : nil }
        let flagged = topLevel(name, at: Syntax(node), call: CallShape(call))
        // An initializer written as a call on the type: `String(validating:as:)`.
        if !flagged, let shape = CallShape(call) { member("init", of: name, at: Syntax(node), call: shape) }
        return .visitChildren
    }

    override func visit(_ node: MemberAccessExprSyntax) -> SyntaxVisitorContinueKind {
        let name = node.declName.baseName.text
        let shape = callShape(of: node)
        if let reference = node.base?.as(DeclReferenceExprSyntax.self), let first = reference.baseName.text.first {
            if moduleNames.contains(reference.baseName.text) {
                topLevel(name, at: Syntax(node), call: shape)
                return .visitChildren
            }
            if first.isUppercase {  // through a type: `Task.sleep(for:)`, `String.init(validating:as:)`
                member(name, of: reference.baseName.text, at: Syntax(node), call: shape)
                return .visitChildren
            }
        }
        anyReceiver(name, at: Syntax(node), call: shape)
        return .visitChildren
    }

    private let moduleNames: Set<String> = [
        "Swift", "_Concurrency", "Foundation", "CoreLocation", "Synchronization", "Observation", "BackgroundTasks", "UIKit",
        "CoreMotion", "Security", "Dispatch", "Darwin", "os", "SwiftUI", "MapKit",
    ]

    /// The argument list of the call `node` is the callee of, or of `name(label:)` written as a reference.
    private func callShape(of node: MemberAccessExprSyntax) -> CallShape? {
        if let names = node.declName.argumentNames { return CallShape(labels: names.arguments.map { $0.name.text }) }
        guard let call = node.parent?.as(FunctionCallExprSyntax.self), call.calledExpression.id == ExprSyntax(node).id else {
            return nil
        }
        return CallShape(call)
    }

    private func visible(_ symbol: Symbol) -> Bool { symbol.modules.contains { imports.contains($0) } }

    /// A type, global function or variable, or macro. Returns whether it was reported.
    @discardableResult
    private func topLevel(_ name: String, at node: Syntax, call: CallShape? = nil) -> Bool {
        guard let declared = table.topLevel[name], !project.types.contains(name), !project.topLevel.contains(name) else {
            return false
        }
        return check(declared.filter(visible), at: node, call: call)
    }

    /// A member reached through a type's name (`Task.sleep(for:)`, `String(validating:as:)`).
    private func member(_ name: String, of owner: String, at node: Syntax, call: CallShape?) {
        guard !project.types.contains(owner), !project.members.contains(owner + "\u{0}" + name) else { return }
        check(table.members(of: owner, named: name).filter(visible), at: node, call: call)
    }

    /// A member of a value of unknown type, or an implicit member (`.foo`): only names that
    /// every declaration in the SDK's modules introduces late, and the project never declares.
    private func anyReceiver(_ name: String, at node: Syntax, call: CallShape?) {
        guard let declared = table.anyReceiver[name], !project.memberNames.contains(name) else { return }
        guard let key = call.map(\.firstLabel) ?? "." else { return }
        check(declared.filter { $0.firstLabel == key && visible($0) }, at: node, call: nil)
    }

    /// Checks a reference that may resolve to any of `declarations` (overloads): it needs only
    /// what the least demanding one that fits the call needs, so an older overload of the same
    /// name never makes a finding. Returns whether it was reported.
    @discardableResult
    private func check(_ declarations: [Symbol], at node: Syntax, call: CallShape?) -> Bool {
        var candidates = declarations
        if let call {
            let functions = declarations.filter { $0.parameters != nil }
            if !functions.isEmpty { candidates = functions.filter { call.fits($0.parameters!) } }
        } else if declarations.contains(where: { $0.parameters == nil }) {
            candidates = declarations.filter { $0.parameters == nil }
        }
        guard !candidates.isEmpty else { return false }
        references += 1
        guard let context = AvailabilityContext.of(node, platform: platform, deployment: deployment) else { return false }
        let available = candidates.filter { !$0.availability.unavailable.contains(platform) }
        guard let easiest = available.min(by: { needs($0) < needs($1) }) else {
            let symbol = candidates[0]
            report(
                node, name: symbol.displayName,
                message:
                    "`\(symbol.displayName)` is unavailable on \(platform.rawValue): exclude it with `#if os(iOS)` (or canImport) or mark the enclosing declaration `@available(\(platform.rawValue), unavailable)`",
                source: symbol.source)
            return true
        }
        // An overload with no stated version for this platform needs nothing.
        let required = needs(easiest)
        guard required > context else { return false }
        report(
            easiest, at: node,
            message:
                "`\(easiest.displayName)` is only available in \(platform.rawValue) \(required) or newer (deployment target \(deployment)): guard it with `if #available(\(platform.rawValue) \(required), *)` or `@available`"
        )
        return true
    }

    private func needs(_ symbol: Symbol) -> Version { symbol.availability.introduced[platform] ?? Version("0")! }

    private func report(_ symbol: Symbol, at node: Syntax, message: String) {
        report(node, name: symbol.displayName, message: message, source: symbol.source)
    }

    private func report(_ node: some SyntaxProtocol, name: String, message: String, source: String) {
        let location = converter.location(for: node.positionAfterSkippingLeadingTrivia)
        findings.append(
            Finding(
                file: file, line: location.line, column: location.column, symbol: name, platform: platform, message: message,
                source: source))
    }
}
