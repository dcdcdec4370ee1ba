import BeekonWire
import Foundation

/// One "where are you now?" request for a device (`POST /v1/devices/{id}/locate`) and
/// where it stands: `pending → [pushed →] delivered → answered | refused`, or `expired` when
/// no answer came before `expiresAtMillis` (`pushed`: a silent push went to the device's
/// push token, XR-6; a device without one skips it). The final states never change again; an answer
/// that arrives after the expiry is kept (`lateFixId`) but does not flip the state.
package struct LocateRequest: Sendable, Equatable {
    /// Lifecycle states (the wire's, issue 31).
    package typealias State = WireLocateRequestState.State

    /// The request id (also the `locate_request_id` the answering fix carries).
    package var id: UUID
    /// The device asked.
    package var installId: UUID
    /// Where it stands.
    package var state: State
    /// Who asked: `admin` or a share id.
    package var requestedBy: String
    /// Times in Unix ms.
    package var createdAtMillis: Int64, expiresAtMillis: Int64
    /// When it was first delivered to the device.
    package var deliveredAtMillis: Int64?
    /// When it reached a final state.
    package var finishedAtMillis: Int64?
    /// The device's reason for a refusal.
    package var reason: String?
    /// The answering fix's id and its read-API JSON object.
    package var fixId: UUID?
    /// The answering fix as the read API renders it.
    package var fixJSON: String?
    /// A fix that answered after the request had expired (stored, but the state stays `expired`).
    package var lateFixId: UUID?
    /// When the push service accepted the silent push.
    package var pushedAtMillis: Int64?
    /// Why the last push attempt failed (e.g. `apns 410 Unregistered`); nil when none failed.
    package var pushError: String?

    /// Creates a request.
    package init(
        id: UUID, installId: UUID, state: State = .pending, requestedBy: String, createdAtMillis: Int64, expiresAtMillis: Int64,
        deliveredAtMillis: Int64? = nil, finishedAtMillis: Int64? = nil, reason: String? = nil, fixId: UUID? = nil,
        fixJSON: String? = nil, lateFixId: UUID? = nil, pushedAtMillis: Int64? = nil, pushError: String? = nil
    ) {
        self.id = id
        self.installId = installId
        self.state = state
        self.requestedBy = requestedBy
        self.createdAtMillis = createdAtMillis
        self.expiresAtMillis = expiresAtMillis
        self.deliveredAtMillis = deliveredAtMillis
        self.finishedAtMillis = finishedAtMillis
        self.reason = reason
        self.fixId = fixId
        self.fixJSON = fixJSON
        self.lateFixId = lateFixId
        self.pushedAtMillis = pushedAtMillis
        self.pushError = pushError
    }

    /// A change the device or the clock makes to a request.
    package enum Change: Sendable, Equatable {
        /// The push service accepted a silent push for it.
        case push
        /// A push attempt failed (the request stays where it is; the reason is kept).
        case pushFailed(reason: String)
        /// Handed to the device.
        case deliver
        /// A fix with this id (and read-API JSON) answered it.
        case answer(fixId: UUID, fixJSON: String)
        /// The device declined.
        case refuse(reason: String)
        /// The clock passed the expiry.
        case expire
    }

    /// Applies `change` at `nowMillis`; returns whether the lifecycle moved (an event to publish).
    /// A request past its expiry expires first, so a late answer only records `lateFixId`.
    package mutating func apply(_ change: Change, nowMillis: Int64) -> Bool {
        if state.isOpen, nowMillis >= expiresAtMillis {
            state = .expired
            finishedAtMillis = expiresAtMillis
            if case .answer(let fixId, _) = change { lateFixId = fixId }
            return true
        }
        switch (change, state) {
        case (.push, .pending):
            state = .pushed
            pushedAtMillis = nowMillis
            pushError = nil
            return true
        case (.pushFailed(let reason), .pending):
            pushError = String(reason.prefix(200))
            return false
        case (.deliver, .pending), (.deliver, .pushed):
            state = .delivered
            deliveredAtMillis = nowMillis
            return true
        case (.answer(let fixId, let json), .pending), (.answer(let fixId, let json), .pushed),
            (.answer(let fixId, let json), .delivered):
            state = .answered
            self.fixId = fixId
            fixJSON = json
            finishedAtMillis = nowMillis
            return true
        case (.answer(let fixId, _), _) where lateFixId == nil && self.fixId != fixId:
            lateFixId = fixId
            return false
        case (.refuse(let reason), .pending), (.refuse(let reason), .pushed), (.refuse(let reason), .delivered):
            state = .refused
            self.reason = String(reason.prefix(200))
            finishedAtMillis = nowMillis
            return true
        default:
            return false
        }
    }

    /// The request as its device is told of it (command channel, ingest answer).
    package var notice: WireLocateNotice {
        WireLocateNotice(id: id, createdAt: WireTimestamp(millis: createdAtMillis), expiresAt: WireTimestamp(millis: expiresAtMillis))
    }

    /// The request as viewers see it (the live `locate` event).
    var wireState: WireLocateRequestState {
        func time(_ millis: Int64?) -> WireTimestamp? { millis.map { WireTimestamp(millis: $0) } }
        return WireLocateRequestState(
            id: id, installId: installId, state: state, requestedBy: requestedBy, createdAt: WireTimestamp(millis: createdAtMillis),
            expiresAt: WireTimestamp(millis: expiresAtMillis), pushedAt: time(pushedAtMillis), deliveredAt: time(deliveredAtMillis),
            finishedAt: time(finishedAtMillis), reason: reason, pushError: pushError, fixId: fixId, lateFixId: lateFixId)
    }

    /// Leaves out what a share limited in time may not see: a step's time outside its hours or
    /// window (the device's activity then; the refusal's reason and the push error go with
    /// their step), and the answering fix — its id too, a UUIDv7 that carries its time — unless
    /// `scope` admits that fix. The late answer's id is always left out (its time is unknown here).
    mutating func narrow(to scope: ViewerScope, nowMillis: Int64) {
        func hidden(_ millis: Int64?) -> Bool { millis.map { !scope.admits(millis: $0, nowMillis: nowMillis) } ?? false }
        if hidden(pushedAtMillis) { (pushedAtMillis, pushError) = (nil, nil) }
        if hidden(deliveredAtMillis) { deliveredAtMillis = nil }
        if hidden(finishedAtMillis) { (finishedAtMillis, reason) = (nil, nil) }
        if fixJSON.flatMap(ViewerJSON.readFix).flatMap({ scope.visible($0, nowMillis: nowMillis) }) == nil { (fixId, fixJSON) = (nil, nil) }
        lateFixId = nil
    }

    /// The JSON object the API and the live stream show; `fix` (the answering fix) only
    /// when `includeFix`, as `viewer` sees it (``ViewerScope/fixPayload(_:)``).
    func json(includeFix: Bool = true, for viewer: ViewerScope = .everything) -> String {
        var w = WireJSONWriter(capacity: 400)
        w.write(wireState) { w in
            guard includeFix else { return }
            w.raw(",\"fix\":")
            w.raw(fixJSON.map(viewer.fixPayload) ?? "null")
        }
        return String(decoding: w.bytes, as: UTF8.self)
    }
}

extension WireLocateRequestState.State {
    /// Whether the request can still change.
    package var isOpen: Bool { self == .pending || self == .pushed || self == .delivered }

    /// The open states as an SQL list (`'pending', 'pushed', 'delivered'`).
    static let openSQL = allCases.filter(\.isOpen).map { "'\($0.rawValue)'" }.joined(separator: ", ")
}
