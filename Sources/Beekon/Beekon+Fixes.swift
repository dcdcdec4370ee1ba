import BeekonWire
import Foundation

/// The one interpreter of the fix decider's effects (`TrackingMachine.decide(_:)`): the
/// only code that writes a fix to the store (the store's insert takes a `FixWrite`, which
/// only this file can make).
extension Beekon {
    /// What running a decision's effects came to.
    struct FixOutcome: Sendable, Equatable {
        /// The ids of the locations stored, in order.
        var stored: [UUID] = []
        /// Whether a crossing was stored (with its fix or alone); its events were published.
        var crossingStored = false
    }

    /// Runs effects in order; a `store`'s follow-ups only when it was stored.
    @discardableResult
    func apply(_ effects: [FixEffect]) async -> FixOutcome {
        var outcome = FixOutcome()
        await apply(effects, into: &outcome)
        return outcome
    }

    private func apply(_ effects: [FixEffect], into outcome: inout FixOutcome) async {
        for effect in effects {
            switch effect {
            case .store(let location, let crossing, let then):
                guard await write(location, crossing: crossing) else { continue }
                outcome.stored.append(location.id)
                await apply(then, into: &outcome)
                if let crossing {
                    outcome.crossingStored = true
                    core.crossingStored(crossing)
                    await publishEvents(crossing.events)
                }
            case .storeCrossing(let crossing):
                do {
                    try await ready().insertEvents(crossing.records, states: crossing.states)
                    outcome.crossingStored = true
                    core.crossingStored(crossing)
                    await publishEvents(crossing.events)
                } catch {
                    logger.error("could not store geofence events", metadata: ["error": "\(error)"])
                }
            case .commit(let location):
                core.machine.committed(location)
                rearmHeartbeat()
            case .publish(let location):
                broadcasts.positions.publish(location)
            case .notifySync:
                await syncEngine?.fixStored()
            case .wakeSync(let trigger):
                await syncEngine?.wake(trigger)
            case .prune:
                await pruneIfDue()
            case .persistHeld(let held):
                do { try await ready().setHeldFix(held) } catch {
                    logger.error("could not persist the held fix", metadata: ["error": "\(error)"])
                }
            case .rejected(let why):
                switch why {
                case .notLater: stats.notLater += 1
                case .tooSoon: stats.tooSoon += 1
                case .tooClose: stats.tooClose += 1
                case .admit, .turn: break
                }
            case .setPowerMode(let mode):
                await tuneSource()
                await deps.provider.setPowerMode(mode)
            case .setMotion(let motion):
                logger.info("motion changed", metadata: ["motion": "\(motion.rawValue)"])
                try? await ready().setMotion(motion)
            case .armProbe, .cancelProbe, .armCheckIn, .cancelCheckIn:
                runTimer(effect)
            case .invalid:
                stats.invalid += 1
            case .heartbeat(let seconds):
                logger.debug("heartbeat fix", metadata: ["interval_s": "\(seconds)"])
            case .rearmDwellCheck:
                await rearmDwellCheck()
            }
        }
    }

    /// Stores one location durably (the crossing in the same transaction). Returns whether it was stored.
    private func write(_ location: Location, crossing: FixCrossing?) async -> Bool {
        do {
            let trimmed = try await ready().insert(
                location, events: crossing?.records ?? [], geofenceStates: crossing?.states ?? [:], syncOn: syncOn,
                by: FixWrite())
            stats.trimmed += trimmed
            stats.stored += 1
            stats.lastStoredFix = location.timestamp
            return true
        } catch {
            stats.storeFailures += 1
            stats.lastError = error
            logger.error("could not store a fix; tracking continues", metadata: ["error": "\(error)"])
            return false
        }
    }

    private func publishEvents(_ events: [GeofenceEvent]) async {
        guard !events.isEmpty else { return }
        for e in events {
            logger.info("geofence crossing", metadata: ["geofence": "\(e.geofenceId)", "type": "\(e.transition.rawValue)"])
            broadcasts.geofenceEvents.publish(e)
        }
        // Geofence events are sparse and high-signal: upload at once (SY-3).
        await syncEngine?.wake(.geofenceEvent)
    }
}

/// The proof that a fix is written by the fix interpreter (`Beekon.apply(_:)`): only this
/// file can make one, and `LocationStore.insert` requires it.
struct FixWrite: Sendable {
    fileprivate init() {}

    /// For the store's own tests, which seed rows without a `Beekon` (`BatchRangeTests`). No
    /// code under `Sources` may use it: `FixDeciderTests.onlyTheInterpreterWritesFixes` checks.
    static var storeTestsOnly: FixWrite { FixWrite() }
}
