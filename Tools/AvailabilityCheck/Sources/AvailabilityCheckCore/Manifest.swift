import SwiftParser
import SwiftSyntax

/// Reads the deployment targets from a Package.swift `platforms:` list (`.iOS(.v16)`,
/// `.macOS(.v10_15)`, `.iOS("16.4")`), so the check can never disagree with the manifest.
public enum Manifest {
    /// The declared minimum version of each supported Apple platform.
    public static func deploymentTargets(packageSwift source: String) -> [ApplePlatform: Version] {
        final class Finder: SyntaxVisitor {
            var found: [ApplePlatform: Version] = [:]
            override func visit(_ node: LabeledExprSyntax) -> SyntaxVisitorContinueKind {
                guard node.label?.text == "platforms", let array = node.expression.as(ArrayExprSyntax.self) else {
                    return .visitChildren
                }
                for element in array.elements {
                    guard let call = element.expression.as(FunctionCallExprSyntax.self),
                        let member = call.calledExpression.as(MemberAccessExprSyntax.self),
                        let platform = ApplePlatform(availabilityName: member.declName.baseName.text),
                        let argument = call.arguments.first?.expression
                    else { continue }
                    var text = argument.trimmedDescription
                    if text.hasPrefix(".v") {
                        text = String(text.dropFirst(2)).replacingUnderscores()
                    } else {
                        text = text.trimmingCharacters(in: "\"")
                    }
                    if let version = Version(text) { found[platform] = version }
                }
                return .skipChildren
            }
        }
        let finder = Finder(viewMode: .sourceAccurate)
        finder.walk(Parser.parse(source: source))
        return finder.found
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String { String(map { $0 == "_" ? "." : $0 }) }
}
