import Foundation
import Logging
import PostgresNIO

/// Group commit on PostgreSQL (issue 32), with the same gathering as SQLite's (`GroupCommit`).
extension PostgresLocationStore {
    /// What group commit has done so far (zeros without it).
    package var groupCommitCounts: GroupCommitCounts { group?.counts ?? GroupCommitCounts(groups: 0, uploads: 0, waiting: 0) }

    /// None: PostgreSQL's writers are its backends (`pg_stat_statements` tells their time).
    package var writerMetricsText: String { "" }
}

extension PostgresLocationStore.Writer {
    /// One upload in its own transaction (autocommit: the statement is the transaction); the
    /// path without group commit, and each upload's own path when a group had to be split.
    func single(_ upload: PostgresIngestUpload) async throws(StoreError) -> PostgresIngestUpload.Outcome {
        let outcomes = try await retryingConflicts { try await run([upload]) }
        return outcomes[0]
    }

    /// One group: all its uploads folded into one statement (`PostgresIngestStatement`, one
    /// multi-row insert per table), which is one transaction and one commit; every upload is
    /// answered with its own outcome, and only after that commit.
    ///
    /// The live sequence stays gap-free across instances: the statement takes the event log's
    /// advisory lock (`k` in `PostgresIngestStatement`) before it draws sequence values and
    /// holds it to its commit.
    ///
    /// Errors: a failed statement stores nothing of the group, so when the failure may be the
    /// fault of one upload (a statement error, not a lost connection), each upload is run again
    /// on its own (`single`) and answered with its own outcome: one bad batch fails alone.
    /// Replaying is safe, as every upload is deduped by its ids. When the connection or server
    /// failed (the commit's fate unknown), every upload of the group gets the error (503), and
    /// devices resend; dedupe makes that harmless.
    func commitGroup(_ uploads: [PostgresIngestUpload]) async -> [Result<PostgresIngestUpload.Outcome, StoreError>] {
        do {
            return try await retrying { try await run(uploads) }.map { .success($0) }
        } catch let failure {
            guard uploads.count > 1, Self.mayBeOneUploads(failure.sqlState) else {
                return uploads.map { _ in .failure(failure.error) }
            }
            logger.debug("group commit split", metadata: ["uploads": "\(uploads.count)", "error": "\(failure.error)"])
            var answers: [Result<PostgresIngestUpload.Outcome, StoreError>] = []
            for upload in uploads {
                do {
                    answers.append(.success(try await single(upload)))
                } catch {
                    answers.append(.failure(error))
                }
            }
            return answers
        }
    }

    /// Runs `uploads` as one statement on a pooled connection; each upload's outcome by position.
    func run(_ uploads: [PostgresIngestUpload]) async throws -> [PostgresIngestUpload.Outcome] {
        let statement = PostgresIngestStatement(uploads)
        let rows = try await client.withConnection { conn in
            do {
                var rows: [PostgresIngestStatement.Row] = []
                for try await row in try await conn.execute(statement, logger: logger) { rows.append(row) }
                return rows
            } catch {
                // A connection the server dropped is closed, not handed back to the pool: a
                // query sent to it might never be answered.
                if !Self.mayBeOneUploads((error as? PSQLError)?.serverInfo?[.sqlState]) { try? await conn.close() }
                throw error
            }
        }
        return PostgresIngestStatement.outcomes(of: uploads, rows: rows)
    }

    /// Whether a failure with this SQLSTATE may be one upload's fault, so that its neighbours
    /// can still be stored: any statement error except a lost connection (08), the server
    /// going away or cancelling (57), lack of resources (53), system errors (58, XX); nil is a
    /// failure without a server answer (connection, timeout).
    static func mayBeOneUploads(_ sqlState: String?) -> Bool {
        guard let sqlState else { return false }
        return !["08", "57", "53", "58", "XX"].contains(String(sqlState.prefix(2)))
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
    /// when the operation does not answer its cancellation (see `OperationTimeout`).
    func withDeadline<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = operationTimeout
        return try await OperationTimeout.run(
            timeout, onExpiry: { StoreError.unavailable("no answer from PostgreSQL within \(timeout)") }, operation)
    }
}
