import Foundation
import Logging
import PostgresNIO

/// Group commit on PostgreSQL (issue 32), with the same gathering as SQLite's (`GroupCommit`).
extension PostgresLocationStore {
    /// What group commit has done so far (zeros without it).
    package var groupCommitCounts: GroupCommitCounts { group?.counts ?? GroupCommitCounts(groups: 0, uploads: 0, waiting: 0) }
}

extension PostgresLocationStore.Writer {
    /// One upload in its own transaction (autocommit: the statement is the transaction); the
    /// path without group commit, and each upload's own path when a group had to be split.
    func single(_ statement: PostgresIngestStatement) async throws(StoreError) -> PostgresIngestStatement.Row {
        try await retryingConflicts {
            try await client.withConnection { conn in try await Self.run(statement, on: conn, logger: logger) }
        }
    }

    /// One group's transaction: `BEGIN`, each upload's statement (the same multi-row
    /// statement as `single`, see `PostgresIngestStatement`), `COMMIT`; then every upload is
    /// answered, so nothing is acknowledged before the shared commit.
    ///
    /// Order: by install, then batch id, so two instances' groups holding the same uploads
    /// take their locks in the same order. The live sequence stays gap-free across
    /// instances: the first statement that stores something takes the event log's advisory
    /// lock (`k` in `PostgresIngestStatement`), which the transaction holds to its commit.
    ///
    /// Errors: a failed statement aborts the whole transaction, so the group is rolled back
    /// and, when the failure may be the fault of one upload (a statement error, not a lost
    /// connection), each upload is run again on its own (`single`) and answered with its own
    /// outcome: one bad batch fails alone. Replaying is safe, as every upload is deduped by
    /// its ids. When the connection or server failed (the commit's fate unknown), every upload
    /// of the group gets the error (503), and devices resend; dedupe makes that harmless.
    func commitGroup(_ statements: [PostgresIngestStatement]) async -> [Result<PostgresIngestStatement.Row, StoreError>] {
        let order = statements.indices.sorted {
            let (a, b) = (statements[$0].batch.envelope, statements[$1].batch.envelope)
            let (ia, ib) = (PostgresLocationStore.orderKey(a.device.installId), PostgresLocationStore.orderKey(b.device.installId))
            return ia != ib ? ia < ib : PostgresLocationStore.orderKey(a.batchId) < PostgresLocationStore.orderKey(b.batchId)
        }
        do {
            let rows = try await retrying {
                try await client.withConnection { conn in
                    try await conn.query("BEGIN", logger: logger)
                    do {
                        var rows = [PostgresIngestStatement.Row](repeating: (0, 0, 0, 0), count: statements.count)
                        for i in order { rows[i] = try await Self.run(statements[i], on: conn, logger: logger) }
                        try await conn.query("COMMIT", logger: logger)
                        return rows
                    } catch {
                        // Leaves the pooled connection out of the failed transaction; one that
                        // the server dropped is closed (a query sent to it might never be answered).
                        if Self.mayBeOneUploads((error as? PSQLError)?.serverInfo?[.sqlState]) {
                            _ = try? await conn.query("ROLLBACK", logger: logger)
                        } else {
                            try? await conn.close()
                        }
                        throw error
                    }
                }
            }
            return rows.map { .success($0) }
        } catch let failure {
            guard statements.count > 1, Self.mayBeOneUploads(failure.sqlState) else {
                return statements.map { _ in .failure(failure.error) }
            }
            logger.debug("group commit split", metadata: ["uploads": "\(statements.count)", "error": "\(failure.error)"])
            var answers: [Result<PostgresIngestStatement.Row, StoreError>] = []
            for statement in statements {
                do {
                    answers.append(.success(try await single(statement)))
                } catch {
                    answers.append(.failure(error))
                }
            }
            return answers
        }
    }

    /// Whether a failure with this SQLSTATE may be one upload's fault, so that its neighbours
    /// can still be stored: any statement error except a lost connection (08), the server
    /// going away or cancelling (57), lack of resources (53), system errors (58, XX); nil is a
    /// failure without a server answer (connection, timeout).
    static func mayBeOneUploads(_ sqlState: String?) -> Bool {
        guard let sqlState else { return false }
        return !["08", "57", "53", "58", "XX"].contains(String(sqlState.prefix(2)))
    }

    static func run(
        _ statement: PostgresIngestStatement, on conn: PostgresConnection, logger: Logger
    ) async throws -> PostgresIngestStatement.Row {
        var row: PostgresIngestStatement.Row = (0, 0, 0, 0)
        for try await r in try await conn.execute(statement, logger: logger) { row = r }
        return row
    }

    /// A failure of `retryingConflicts`, with the SQLSTATE it carried (if the server answered).
    struct Failure: Error {
        let error: StoreError
        let sqlState: String?
    }

    /// Runs `operation` with the deadline, retrying a few times on deadlock / serialization
    /// failure, mapping errors to `StoreError`.
    func retryingConflicts<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws(StoreError) -> T {
        do {
            return try await retrying(operation)
        } catch {
            throw error.error
        }
    }

    /// `retryingConflicts`, keeping the SQLSTATE of the last failure.
    func retrying<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws(Failure) -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await withDeadline(operation)
            } catch {
                let state = (error as? PSQLError)?.serverInfo?[.sqlState]
                if attempt < 4, state == "40P01" || state == "40001" {
                    logger.warning("transaction retried", metadata: ["sqlstate": "\(state ?? "")", "attempt": "\(attempt)"])
                    continue
                }
                throw Failure(error: PostgresLocationStore.storeError(error), sqlState: state)
            }
        }
    }

    /// Runs `operation`, failing with `StoreError.unavailable` after `operationTimeout`, even
    /// when the operation does not answer its cancellation (see `Deadline`).
    func withDeadline<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = operationTimeout
        return try await Deadline.run(
            timeout, onExpiry: { StoreError.unavailable("no answer from PostgreSQL within \(timeout)") }, operation)
    }
}
