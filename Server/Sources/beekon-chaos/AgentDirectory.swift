import Foundation

/// The agents of a trial by their proxy label, for the proxy's threads (set once the
/// agents exist; a request before that finds none).
final class AgentDirectory: @unchecked Sendable {
    private let lock = NSLock()
    private var byLabel: [String: AgentSlot] = [:]

    /// Registers the agents.
    func set(_ agents: [AgentSlot]) {
        lock.withLock { byLabel = Dictionary(uniqueKeysWithValues: agents.map { ($0.label, $0) }) }
    }

    /// The agent with `label`, if any.
    subscript(label: String?) -> AgentSlot? { lock.withLock { label.flatMap { byLabel[$0] } } }
}
