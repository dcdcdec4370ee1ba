import Foundation

/// Where the server keeps its data: an embedded SQLite file or a PostgreSQL database.
package enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    /// An SQLite file (created if missing), opened in WAL mode.
    case sqlite(path: String)
    /// A PostgreSQL server.
    case postgres(PostgresLocation)

    /// Parses `sqlite:PATH`, a bare path, or `postgres://user:password@host:port/database?sslmode=disable|prefer|require`.
    package init(parsing text: String) throws(ConfigurationError) {
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try PostgresLocation(url: text))
        } else if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw .invalidDatabase(text, "sqlite: needs a file path, e.g. sqlite:beekon-ingest.sqlite") }
            self = .sqlite(path: path)
        } else if !text.isEmpty, !text.contains("://") {
            self = .sqlite(path: text)
        } else {
            throw .invalidDatabase(text, "use sqlite:PATH or postgres://user@host:port/database")
        }
    }

    /// A form safe for logs (no password).
    package var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let p): return "postgres://\(p.username)@\(p.host):\(p.port)/\(p.database)"
        }
    }
}

/// Connection parameters for PostgreSQL.
package struct PostgresLocation: Sendable, Equatable {
    /// TLS policy towards the database server.
    package enum TLSMode: String, Sendable { case disable, prefer, require }

    /// Host name or address.
    package var host: String
    /// TCP port.
    package var port: Int
    /// Role to connect as.
    package var username: String
    /// Password, if the server asks for one.
    package var password: String?
    /// Database name.
    package var database: String
    /// TLS policy (`sslmode` in the URL); default `prefer`.
    package var tls: TLSMode

    /// Creates connection parameters.
    package init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String, tls: TLSMode = .prefer) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Parses `postgres://user:password@host:port/database?sslmode=…`.
    package init(url text: String) throws(ConfigurationError) {
        guard let c = URLComponents(string: text), let host = c.host, !host.isEmpty else {
            throw .invalidDatabase(text, "expected postgres://user:password@host:port/database")
        }
        let user = c.user ?? "postgres"
        let db = c.path.hasPrefix("/") ? String(c.path.dropFirst()) : c.path
        var tls = TLSMode.prefer
        if let mode = c.queryItems?.first(where: { $0.name == "sslmode" })?.value {
            guard let m = TLSMode(rawValue: mode) else {
                throw .invalidDatabase(text, "sslmode must be disable, prefer or require")
            }
            tls = m
        }
        self.init(
            host: host, port: c.port ?? 5432, username: user, password: c.password,
            database: db.isEmpty ? user : db, tls: tls)
    }
}

/// A configuration value that cannot be used.
package enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `--database` value could not be understood.
    case invalidDatabase(String, String)
    /// Another option has an unusable value.
    case invalidOption(String, String)

    package var description: String {
        switch self {
        case .invalidDatabase(let value, let hint): return "invalid --database '\(value.redactingPassword)': \(hint)"
        case .invalidOption(let name, let hint): return "invalid \(name): \(hint)"
        }
    }
}

extension String {
    /// Replaces the password of a URL-like string with `***`.
    var redactingPassword: String {
        guard var c = URLComponents(string: self), c.password != nil else { return self }
        c.password = "***"
        return c.string ?? self
    }
}
