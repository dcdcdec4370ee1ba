import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Small files that must survive a power cut, written the one way that does: a new file is
/// written and flushed before it is renamed over the old one, and the directory is flushed
/// after the rename (a rename, like a create, is only durable once its directory is). Foundation's
/// `Data.write(to:options: .atomic)` renames without either flush, so after a power cut the
/// file may be empty or gone.
///
/// On Apple platforms the flush is `F_FULLFSYNC`: Apple's fsync(2) says fsync moves the data
/// to the drive, which "may not physically write the data ... for quite some time", and that
/// applications needing a strict order of writes "should use F_FULLFSYNC".
public enum DurableFile {
    /// Why a durable write failed: the step and the `errno` text.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// What was being done, with the system's reason.
        public let description: String
    }

    /// Replaces `path` with `data` (mode `mode`) so that after a power cut it holds either the
    /// old contents or the new, never a mix, an empty file or nothing.
    /// - Throws: ``Failure`` when the temporary file cannot be written or renamed; `path` is then unchanged.
    public static func replace(_ path: String, with data: Data, mode: mode_t = 0o644) throws(Failure) {
        let temp = path + ".tmp-\(getpid())-\(UInt32.random(in: .min ... .max))"
        try create(temp, with: data, mode: mode, syncDirectory: false)
        guard rename(temp, path) == 0 else {
            let reason = Self.reason()
            unlink(temp)
            throw Failure(description: "cannot replace \(Self.name(path)): \(reason)")
        }
        syncDirectory(of: path)
    }

    /// Creates `path`, which must not exist (`O_EXCL`: of two racing processes one fails), with
    /// exactly `mode` whatever the umask, writes `data`, flushes it, and (with `syncDirectory`)
    /// its directory entry.
    /// - Throws: ``Failure`` when it exists or cannot be written; a partly written file is removed.
    public static func create(_ path: String, with data: Data, mode: mode_t, syncDirectory sync: Bool = true) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(description: "cannot create \(Self.name(path)): \(Self.reason())") }
        defer { close(fd) }
        fchmod(fd, mode)  // open's mode is narrowed by the umask
        let written: Bool = data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
        guard written, flush(fd) else {
            let reason = Self.reason()
            unlink(path)
            throw Failure(description: "cannot write \(Self.name(path)): \(reason)")
        }
        if sync { syncDirectory(of: path) }
    }

    /// Flushes the directory holding `path`, so a create, rename or unlink in it is durable.
    public static func syncDirectory(of path: String) {
        let dir = (path as NSString).deletingLastPathComponent
        let fd = open(dir.isEmpty ? "." : dir, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = flush(fd)
        close(fd)
    }

    /// fsync, or on Apple platforms F_FULLFSYNC (falling back to fsync where the file system
    /// does not support it).
    private static func flush(_ fd: Int32) -> Bool {
        #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) == 0 { return true }
        #endif
        return fsync(fd) == 0
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
    private static func name(_ path: String) -> String { (path as NSString).lastPathComponent }
}
