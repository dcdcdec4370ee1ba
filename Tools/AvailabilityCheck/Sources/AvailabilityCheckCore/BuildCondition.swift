import SwiftSyntax

/// A `#if` condition's value for one Apple platform: true, false, or unknown (both branches
/// may be compiled, e.g. `targetEnvironment(simulator)`, `DEBUG`, `compiler(>=6.0)`), in which
/// case the check walks every clause that may be active.
enum Truth {
    case yes, no, unknown

    static prefix func ! (value: Truth) -> Truth {
        switch value {
        case .yes: return .no
        case .no: return .yes
        case .unknown: return .unknown
        }
    }

    static func && (lhs: Truth, rhs: Truth) -> Truth {
        if lhs == .no || rhs == .no { return .no }
        if lhs == .yes && rhs == .yes { return .yes }
        return .unknown
    }

    static func || (lhs: Truth, rhs: Truth) -> Truth {
        if lhs == .yes || rhs == .yes { return .yes }
        if lhs == .no && rhs == .no { return .no }
        return .unknown
    }
}

/// Evaluates `#if` conditions as the compiler would when building for `platform`.
struct BuildCondition {
    let platform: ApplePlatform

    /// Modules that never import on an Apple platform (Linux/Windows/Android C libraries and the
    /// Linux-only Foundation modules).
    static let nonAppleModules: Set<String> = [
        "Glibc", "Musl", "Android", "Bionic", "WinSDK", "ucrt", "CRT", "WASILibc", "FoundationNetworking", "FoundationXML",
        "FoundationEssentials", "FoundationInternationalization",
    ]
    /// Compilation conditions defined only by Linux builds of this project (the shim targets).
    static let linuxOnlyFlags: Set<String> = ["BEEKON_APPLE_SHIM"]

    func evaluate(_ expression: ExprSyntax) -> Truth {
        if let literal = expression.as(BooleanLiteralExprSyntax.self) {
            return literal.literal.tokenKind == .keyword(.true) ? .yes : .no
        }
        if let flag = expression.as(DeclReferenceExprSyntax.self) {
            return Self.linuxOnlyFlags.contains(flag.baseName.text) ? .no : .unknown
        }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "!" {
            return !evaluate(prefix.expression)
        }
        if let tuple = expression.as(TupleExprSyntax.self), tuple.elements.count == 1, let inner = tuple.elements.first {
            return evaluate(inner.expression)
        }
        if let infix = expression.as(InfixOperatorExprSyntax.self) {
            switch infix.operator.trimmedDescription {
            case "&&": return evaluate(infix.leftOperand) && evaluate(infix.rightOperand)
            case "||": return evaluate(infix.leftOperand) || evaluate(infix.rightOperand)
            default: return .unknown
            }
        }
        if let sequence = expression.as(SequenceExprSyntax.self) {
            // Unfolded `a && b || c`: && binds tighter than ||.
            var disjunction: Truth = .no
            var conjunction: Truth = .yes
            for element in sequence.elements {
                if let op = element.as(BinaryOperatorExprSyntax.self) {
                    if op.operator.text == "||" {
                        disjunction = disjunction || conjunction
                        conjunction = .yes
                    } else if op.operator.text != "&&" {
                        return .unknown
                    }
                } else {
                    conjunction = conjunction && evaluate(element)
                }
            }
            return disjunction || conjunction
        }
        if let call = expression.as(FunctionCallExprSyntax.self) {
            let name = call.calledExpression.trimmedDescription
            let argument = call.arguments.first?.expression.trimmedDescription ?? ""
            switch name {
            case "os":
                if argument == "macOS" || argument == "OSX" { return platform == .macOS ? .yes : .no }
                if argument == "iOS" { return platform == .iOS ? .yes : .no }
                return .no
            case "canImport":
                let module = String(argument.split(separator: ".").first ?? "")
                if Self.nonAppleModules.contains(module) { return .no }
                if module == "UIKit" { return platform == .iOS ? .yes : .no }
                if module == "BackgroundTasks" { return platform == .iOS ? .yes : .unknown }
                if module == "AppKit" { return platform == .macOS ? .yes : .no }
                return .yes
            case "targetEnvironment":
                return argument == "macCatalyst" ? .no : .unknown
            default:
                return .unknown
            }
        }
        return .unknown
    }
}
