import BeekonChaos
import BeekonWire
import Foundation

extension Trial {
    /// The invariants, from every agent's history and status, the server's read API, the
    /// proxy's record of every exchange and the viewers' streams.
    func verify() async -> TrialResult {
        var result = TrialResult()
        var allStored = Set<String>()
        var allEvents = Set<String>()
        var serverIDs = Set<String>()
        let log = proxy.log
        let uploads = log.filter { !FaultSchedule.isRefresh($0.path) }
        let acked = Set(uploads.filter { ($0.upstreamStatus ?? 0) / 100 == 2 }.compactMap(\.batchID))
        var eventBatches: [String: Set<UUID>] = [:]
        var fixBatches: [String: Set<UUID>] = [:]
        for exchange in uploads {
            guard let batch = exchange.batchID else { continue }
            for id in exchange.eventIDs { eventBatches[id.wireString, default: []].insert(batch) }
            for id in exchange.locationIDs { fixBatches[id.wireString, default: []].insert(batch) }
        }
        let port = server.port
        for agent in agents {
            guard let history = await query(agent, ["history", "--db", agent.db, "--format", "ndjson"]),
                let agentStatus = await status(agent), let install = agentStatus["install_id"] as? String
            else { continue }
            let rows = Self.objects(history)
            let mine = rows.compactMap { $0["id"] as? String }
            allStored.formUnion(mine)
            result["stored"] += mine.count
            let theirs: [String]
            let counted: Int
            do {
                theirs = try await Blocking.run { Result { try ReadAPI.fixIDs(port: port, install: install) } }.get()
                counted = try await Blocking.run { Result { try ReadAPI.geofenceEventCount(port: port, install: install) } }.get()
            } catch {
                tally.crash("agent\(agent.index): read API: \(error)")
                continue
            }
            serverIDs.formUnion(theirs)
            result["at_server"] += theirs.count
            result["duplicated"] += theirs.count - Set(theirs).count
            let lost = Set(mine).subtracting(theirs)
            result["lost"] += lost.count
            if !lost.isEmpty {
                result.problems.append(
                    "agent\(agent.index): \(lost.count) stored fixes not at the server, e.g. \(lost.sorted().prefix(3)); status \(agentStatus)"
                )
            }
            result["foreign"] += Set(theirs).subtracting(mine).count
            // Geofence events: each stored one went out in a batch the server accepted, and the
            // server's per-session counts (it dedupes by event id) add up to the agent's.
            let events = Self.objects(await query(agent, ["history", "--db", agent.db, "--events"]) ?? "").compactMap {
                $0["id"] as? String
            }
            allEvents.formUnion(events)
            result["events_stored"] += events.count
            let undelivered = events.filter { eventBatches[$0, default: []].isDisjoint(with: acked) }
            result["events_lost"] += undelivered.count
            if !undelivered.isEmpty {
                result.problems.append("agent\(agent.index): \(undelivered.count) stored geofence events never accepted by the server")
            }
            result["events_at_server"] += counted
            if counted != events.count {
                result.problems.append("agent\(agent.index): \(events.count) geofence events stored, \(counted) at the server")
                result["events_lost"] += max(0, events.count - counted)
                result["events_duplicated"] += max(0, counted - events.count)
            }
            // Sessions: one id over every run (start, resumes), and it is what the history carries.
            let sessions = Set(agent.sessions + rows.compactMap { $0["session_id"] as? String })
            if sessions.count > 1 {
                result["session_changes"] += sessions.count - 1
                result.problems.append("agent\(agent.index): sessions \(sessions.sorted()) (runs: \(agent.runModes))")
            }
            if ["pending_uploads", "open_batches", "rejected_locations"].contains(where: { (agentStatus[$0] as? Int ?? 0) != 0 }) {
                result.problems.append("agent\(agent.index): queue not empty at the end: \(agentStatus)")
            }
        }
        checkExchanges(uploads: uploads, refreshes: log.filter { FaultSchedule.isRefresh($0.path) }, into: &result)
        // A fix travelling in two different batches is a duplicate delivery even though the server dedupes.
        for (id, batches) in fixBatches where batches.count > 1 {
            result["duplicated"] += 1
            if result.problems.filter({ $0.contains("batches") }).count < 3 {
                result.problems.append("fix \(id) sent in batches \(batches)")
            }
        }
        for (id, batches) in eventBatches where batches.count > 1 {
            result["events_duplicated"] += 1
            result.problems.append("geofence event \(id) sent in batches \(batches)")
        }
        result["foreign"] += Set(eventBatches.keys).subtracting(allEvents).count
        result["foreign"] += Set(fixBatches.keys).subtracting(allStored).count
        await checkViewers(expected: serverIDs, into: &result)
        let crashes = tally.crashes
        result["crashes"] = crashes.count
        result.problems += crashes
        return result
    }

    /// The server never answered 5xx (while its database was up) or 400/413/415/422 to a
    /// batch, nor 5xx to a refresh while the database was up; and how often it was unreachable.
    private func checkExchanges(uploads: [ChaosProxy.Exchange], refreshes: [ChaosProxy.Exchange], into result: inout TrialResult) {
        for exchange in uploads + refreshes {
            guard let window = exchange.upstreamWindow else { continue }
            guard let status = exchange.upstreamStatus else {
                tally.add("upstream_unreachable")
                continue
            }
            let refresh = FaultSchedule.isRefresh(exchange.path)
            let serverError = status >= 500 && shared.wasUp(during: window)
            if serverError || (!refresh && [400, 413, 415, 422].contains(status)) {
                result["server_errors"] += 1
                let what = refresh ? "a refresh" : "batch \(exchange.batchID?.wireString ?? "?")"
                result.problems.append("server answered \(status) to \(what) from \(exchange.agent ?? "?")")
            }
        }
    }

    /// Live viewers: each one's received set is the server's stored set, nothing twice.
    private func checkViewers(expected: Set<String>, into result: inout TrialResult) async {
        for viewer in viewers {
            let (lost, duplicated, foreign) = await Blocking.run { viewer.finish(expected: expected) }
            result["viewer_lost"] += lost
            result["viewer_dup"] += duplicated
            result["foreign"] += foreign
            if lost + duplicated + foreign > 0 {
                result.problems.append(
                    "viewer\(viewer.index): \(lost) stored fixes never streamed, \(duplicated) streamed twice, "
                        + "\(foreign) unknown (\(viewer.sessions) connections)")
            }
            let problems = viewer.problems
            result.problems += problems
            result["viewer_dup"] += problems.count
            tally.add("viewer_connections", viewer.sessions)
        }
    }

    /// The JSON objects of an NDJSON text.
    private static func objects(_ ndjson: String) -> [[String: Any]] {
        ndjson.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }
}
