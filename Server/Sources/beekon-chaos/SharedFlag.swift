import Foundation

/// A Boolean shared between the chaos loop and the task that clears it.
final class SharedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var state = false

    /// The value.
    var value: Bool {
        get { lock.withLock { state } }
        set { lock.withLock { state = newValue } }
    }
}
