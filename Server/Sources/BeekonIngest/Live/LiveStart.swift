import BeekonWire
import Foundation
import Hummingbird

/// The outcome of opening a live stream: the refusal to send, or where the stream starts.
enum LiveOpening: Sendable {
    /// Refused (401, 403, 400 or 503), with the answer to send.
    case refused(Response)
    /// Allowed: the stream to run.
    case stream(LiveStart)
}

/// Where an allowed live stream starts and how it frames events: the viewer's scope and
/// grant, the first cursor and the bytes sent before any event (`retry:`, the greeting
/// comment and, for a cursor the log cannot serve, a `reset` event whose id is the head).
/// Both ways of serving a stream (``LiveStream`` on the Hummingbird route and
/// ``LiveViewerHandler`` on the event-driven path) use it, so their bytes are the same.
struct LiveStart: Sendable {
    /// What the viewer may see (its share's scope narrowed to its device filter).
    let scope: ViewerScope
    /// The credential behind the stream; re-checked on wake-ups for shares.
    let grant: ViewerGrant
    /// The first cursor: the requested one, or the head (no `Last-Event-ID`, or a reset).
    let cursor: Int64
    /// The bytes to send first.
    let preamble: ByteBuffer
    /// The opaque ids of a share's stream (nil: the sequence, for admin keys and auth off).
    let ids: LiveEventIDs?
    /// The stream's slot in its share's cap (nil: not capped); released when the stream ends.
    let hold: Hold?

    /// The comment written at a heartbeat tick of an idle stream.
    static let keepAlive = ": keep-alive\n\n"

    /// The response headers of a stream.
    static var headers: HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        return headers
    }

    /// Decides the first cursor from the requested one (nil: start at the head) and the log's marks.
    /// `greeting`: frames sent after the preamble, before any event (a circle's snapshot, issue 52).
    init(
        scope: ViewerScope, grant: ViewerGrant, requested: Int64?, marks: EventLogMarks, retryMillis: Int, ids: LiveEventIDs? = nil,
        hold: Hold? = nil, greeting: String? = nil
    ) {
        self.scope = scope
        self.grant = grant
        self.ids = ids
        self.hold = hold
        var out = ByteBuffer()
        out.writeString("retry: \(retryMillis)\n: beekon live stream\n\n")
        var cursor = marks.head
        if let start = requested {
            if start < marks.prunedThrough || start > marks.head {
                // A share's reset names no head: its id (opaque) is where the stream resumes.
                let reset = WireLiveReset(
                    reason: start > marks.head ? .unknownEventId : .beyondRetention, head: ids == nil ? marks.head : nil)
                out.writeString("id: \(ids?.token(marks.head) ?? String(marks.head))\nevent: reset\ndata: ")
                out.writeBytes(reset.encoded())
                out.writeString("\n\n")
            } else {
                cursor = start
            }
        }
        if let greeting { out.writeString(greeting) }
        self.cursor = cursor
        self.preamble = out
    }

    /// The SSE frames of the events this viewer may see at `nowMillis`, coarsened as its scope
    /// requires. With `shared`, each frame comes from the instance's cache (rendered once for
    /// every viewer at this precision); a single frame is then sent as the cached bytes, uncopied.
    func frames(_ events: [LiveEvent], nowMillis: Int64, shared: LiveFrameCache? = nil) -> ByteBuffer {
        var out: ByteBuffer?
        for event in events {
            // A circle's stream narrows each member's devices by that member's sharing (issue 52).
            let scope = scope.deviceRules == nil ? scope : scope.applying(to: event.installId)
            guard scope.admits(event, nowMillis: nowMillis) else { continue }
            let frame =
                shared?.frame(event, scope: scope, ids: ids) ?? ByteBuffer(string: LiveFrameCache.render(event, scope: scope, ids: ids))
            if out == nil {
                out = frame
            } else {
                out?.writeImmutableBuffer(frame)
            }
        }
        return out ?? ByteBuffer()
    }
}
