import Foundation

/// Encodes/decodes the envelope's `extras` map for storage (sorted keys, nil when empty).
enum ExtrasJSON {
    static func encode(_ extras: [String: String]) -> String? {
        guard !extras.isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(extras)).flatMap { String(data: $0, encoding: .utf8) }
    }

    static func decode(_ text: String?) -> [String: String] {
        guard let text, let data = text.data(using: .utf8) else { return [:] }
        return (try? JSONDecoder().decode([String: String].self, from: data)) ?? [:]
    }
}
