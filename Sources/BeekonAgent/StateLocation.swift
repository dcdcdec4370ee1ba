import Foundation

/// Where `beekon track` keeps its database when `--db` is not given.
///
/// 1. `--db PATH` wins.
/// 2. `--state-dir DIR` → `DIR/beekon.sqlite` (the directory is created).
/// 3. `$STATE_DIRECTORY` (set by systemd's `StateDirectory=beekon`) →
///    its first entry + `/beekon.sqlite`.
/// 4. Running under systemd (`$INVOCATION_ID` set) → `/var/lib/beekon/beekon.sqlite`.
/// 5. Otherwise an error: an interactive run must say where its data goes.
enum StateLocation {
    /// The service's default state directory.
    static let serviceDirectory = "/var/lib/beekon"
    /// The database file name inside a state directory.
    static let fileName = "beekon.sqlite"

    struct Problem: Error, CustomStringConvertible { var description: String }

    static func databasePath(
        db: String?, stateDir: String?,
        environment env: [String: String] = ProcessInfo.processInfo.environment
    ) throws(Problem) -> String {
        if let db, !db.isEmpty { return db }
        let directory: String
        if let stateDir, !stateDir.isEmpty {
            directory = stateDir
        } else if let fromSystemd = env["STATE_DIRECTORY"]?.split(separator: ":").first, !fromSystemd.isEmpty {
            directory = String(fromSystemd)
        } else if env["INVOCATION_ID"] != nil {
            directory = serviceDirectory
        } else {
            throw Problem(description: "no database given: pass --db PATH or --state-dir DIR (the service uses \(serviceDirectory))")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw Problem(description: "cannot create the state directory \(directory): \(error.localizedDescription)")
        }
        return (directory as NSString).appendingPathComponent(fileName)
    }
}
