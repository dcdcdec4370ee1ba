/// Splits CSV text into records (RFC 4180: quoted fields, `""` for a quote,
/// delimiters and line breaks inside quotes), remembering each record's line.
struct CSVRecordSplitter: Sendable {
    /// One record and the line it starts on.
    struct Record: Sendable {
        var line: Int
        var fields: [String]
        /// The record ended inside an unterminated quoted field.
        var unterminatedQuote = false
    }

    /// A quoted field longer than this is cut off (its record is malformed).
    static let maxFieldLength = 65_536

    /// Picks `,`, `;` or tab: whichever occurs most in the first line outside quotes (comma on a tie).
    static func delimiter(forFirstLineOf text: Substring) -> Character {
        var comma = 0
        var semicolon = 0
        var tab = 0
        var quoted = false
        for c in text {
            if c == "\n" || c == "\r" || c == "\r\n" { break }
            if c == "\"" {
                quoted.toggle()
                continue
            }
            guard !quoted else { continue }
            if c == "," { comma += 1 } else if c == ";" { semicolon += 1 } else if c == "\t" { tab += 1 }
        }
        if comma >= semicolon, comma >= tab { return "," }
        return semicolon >= tab ? ";" : "\t"
    }

    /// All records of `text`; blank lines are left out.
    static func records(_ text: Substring, delimiter: Character) -> [Record] {
        var out: [Record] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var fieldWasQuoted = false
        var line = 1
        var recordLine = 1
        var overlong = false
        var iterator = text.makeIterator()
        var pending: Character?

        func endRecord(unterminated: Bool) {
            fields.append(field)
            field = ""
            fieldWasQuoted = false
            let blank = fields.count == 1 && fields[0].allSatisfy { $0 == " " || $0 == "\t" }
            if !blank || unterminated {
                out.append(Record(line: recordLine, fields: fields, unterminatedQuote: unterminated || overlong))
            }
            fields = []
            overlong = false
        }

        while let c = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    let next = iterator.next()
                    if next == "\"" {
                        field.append("\"")
                    } else {
                        quoted = false
                        pending = next
                    }
                } else {
                    if c == "\n" || c == "\r\n" || c == "\r" { line += 1 }
                    if field.utf8.count < maxFieldLength { field.append(c) } else { overlong = true }
                }
                continue
            }
            switch c {
            case "\"" where field.isEmpty && !fieldWasQuoted:
                quoted = true
                fieldWasQuoted = true
            case delimiter:
                fields.append(field)
                field = ""
                fieldWasQuoted = false
            case "\n", "\r\n", "\r":
                endRecord(unterminated: false)
                line += 1
                recordLine = line
            default:
                if field.utf8.count < maxFieldLength { field.append(c) } else { overlong = true }
            }
        }
        if quoted || !field.isEmpty || !fields.isEmpty {
            endRecord(unterminated: quoted)
        }
        return out
    }
}
