import Beekon
import BeekonSources
import Foundation

/// A `--source` value: `replay:PATH`.
enum SourceSpec: Equatable, Sendable {
    case replay(path: String)

    struct Problem: Error, CustomStringConvertible { var description: String }

    init(argument: String) throws(Problem) {
        if argument.hasPrefix("replay:") {
            let path = String(argument.dropFirst("replay:".count))
            guard !path.isEmpty else { throw Problem(description: "--source replay: needs a file path (replay:PATH)") }
            self = .replay(path: path)
        } else {
            throw Problem(description: "unknown --source '\(argument)' (expected replay:PATH)")
        }
    }
}
