import SwiftSyntax

/// The lowest `platform` version on which a node's code can run: the deployment target raised by
/// every enclosing `@available` declaration (types, extensions, functions, properties…),
/// `if #available` body (and the conditions after it in the same list), code after a
/// `guard #available … else`, and the `else` of `if #unavailable` / `guard #unavailable`.
/// nil when the node can never run on `platform` (an enclosing `@available(platform, unavailable)`
/// or `@available(*, unavailable)`).
enum AvailabilityContext {
    static func of(_ node: Syntax, platform: ApplePlatform, deployment: Version) -> Version? {
        var version = deployment
        func raise(_ availability: Availability) {
            if let introduced = availability.introduced[platform], introduced > version { version = introduced }
        }
        var child = node
        var current = node.parent
        while let ancestor = current {
            // @available on any enclosing declaration (also the one the node itself belongs to).
            if let declaration = ancestor.asProtocol(WithAttributesSyntax.self) {
                for availability in availabilities(declaration.attributes) {
                    if availability.unavailable.contains(platform) { return nil }
                    raise(availability)
                }
            }
            if let ifExpression = ancestor.as(IfExprSyntax.self) {
                if child.id == ifExpression.body.id {
                    for condition in availabilityConditions(ifExpression.conditions) where !condition.negated {
                        raise(condition.availability)
                    }
                } else if let elseBody = ifExpression.elseBody, child.id == elseBody.id {
                    for condition in availabilityConditions(ifExpression.conditions) where condition.negated {
                        raise(condition.availability)
                    }
                }
            }
            if let guardStatement = ancestor.as(GuardStmtSyntax.self), child.id == guardStatement.body.id {
                for condition in availabilityConditions(guardStatement.conditions) where condition.negated {
                    raise(condition.availability)
                }
            }
            // `if #available(…), <here>`: conditions after an availability condition in one list.
            if let list = ancestor.as(ConditionElementListSyntax.self) {
                for element in list {
                    if element.id == child.id { break }
                    if let availability = element.condition.as(AvailabilityConditionSyntax.self),
                        availability.availabilityKeyword.tokenKind == .poundAvailable
                    {
                        raise(Availability(arguments: availability.availabilityArguments.trimmedDescription))
                    }
                }
            }
            // Statements after `guard #available(…) else { … }` in the same block.
            if let items = ancestor.as(CodeBlockItemListSyntax.self) {
                for item in items {
                    if item.id == child.id { break }
                    guard let guardStatement = item.item.as(GuardStmtSyntax.self) else { continue }
                    for condition in availabilityConditions(guardStatement.conditions) where !condition.negated {
                        raise(condition.availability)
                    }
                }
            }
            child = ancestor
            current = ancestor.parent
        }
        return version
    }

    /// Every `@available(…)` among `attributes` (including those inside `#if` attribute clauses).
    static func availabilities(_ attributes: AttributeListSyntax) -> [Availability] {
        var result: [Availability] = []
        for element in attributes {
            guard case .attribute(let attribute) = element,
                attribute.attributeName.trimmedDescription == "available",
                let arguments = attribute.arguments
            else { continue }
            result.append(Availability(arguments: arguments.trimmedDescription))
        }
        return result
    }

    static func availabilityConditions(_ conditions: ConditionElementListSyntax) -> [(negated: Bool, availability: Availability)] {
        conditions.compactMap { element in
            guard let condition = element.condition.as(AvailabilityConditionSyntax.self) else { return nil }
            return (
                condition.availabilityKeyword.tokenKind == .poundUnavailable,
                Availability(arguments: condition.availabilityArguments.trimmedDescription)
            )
        }
    }
}
