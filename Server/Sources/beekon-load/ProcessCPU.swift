import Foundation

/// CPU time of a process, read from Linux's `/proc` (the load tool's own and each server's).
enum ProcessCPU {
    /// User + system CPU seconds of `pid` so far, from `/proc/<pid>/stat` (0 when unreadable).
    static func seconds(pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // After "pid (comm)": field 3 is the state; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
