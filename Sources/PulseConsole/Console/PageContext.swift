import PulseHTML
import PulseHTTPServer
import PulseServerStorage
import PulseSyncAPI

/// What a page's `get` and `post` are given: who asks, the CSRF token for its forms, the time, storage, the
/// server's public URL, the request and the path's `*` values.
public struct PageContext: Sendable {
    public let principal: ConsolePrincipal
    /// The session's CSRF token: every form posts it (`form(action:)` adds it).
    public let csrfToken: String
    /// The server's clock, whole Unix seconds.
    public let now: Int64
    public let storage: any ServerStorage
    /// The server's origin as a browser reaches it (`https://sync.example.org`): the configured
    /// `--public-url`, else the request's `Host` (see `RequestFacts.ownOrigin`).
    public let publicURL: String
    public let request: HTTPRequest
    /// The values of the page path's `*` segments, in order.
    public let parameters: [String]
    /// The one-time notice of a form's redirect, shown once.
    public let notice: String?
    /// The sync responder (cache, event hub, configuration).
    public let sync: SyncAPI
    /// The console itself (the event name, the staff API seam).
    let console: Console
    /// The console session's cookie value (for its one-time notice) and its staff token's hash (the staff
    /// API's principal): never shown, never logged.
    let sessionId: String
    let tokenHash: [UInt8]

    /// The path of this request, without the query.
    public var path: String { String(decoding: SyncAPI.split(request.target).path, as: UTF8.self) }

    /// The event's name for headers and titles (the series' titles).
    public var eventName: String { console.catalog.eventName(storage: storage) }

    /// The forms of this session's pages (each with the hidden CSRF field): what a view is given.
    public var forms: Forms { Forms(csrfToken: csrfToken) }

    /// A `POST` form to `action` (a console path) with the hidden CSRF field, then `content` (`Forms.form`).
    public func form(
        action: String, id: String? = nil, class className: String? = nil, confirm: String? = nil, @NodeBuilder content: () -> NodeList
    ) -> Node {
        forms.form(action: action, id: id, class: className, confirm: confirm, content: content)
    }

    /// The query's fields (`?q=…&from=…`), bounded like a form body; empty when unreadable.
    var query: FormFields { FormFields(body: Array(SyncAPI.split(request.target).query)) ?? FormFields() }
}

/// Writes the console's `POST` forms, each with the session's CSRF token in a hidden `csrf` field: the one
/// way a view makes a form, so none goes without it.
public struct Forms: Sendable {
    let csrfToken: String

    /// A `POST` form to `action` (a console path) with the hidden CSRF field, then `content`. `confirm`: the
    /// question the script asks before it is sent (`data-confirm`); `id`, `class`: as on any element.
    public func form(
        action: String, id: String? = nil, class className: String? = nil, confirm: String? = nil, @NodeBuilder content: () -> NodeList
    ) -> Node {
        let inner = content()
        return PulseHTML.form(
            .method("post"), .action(action), id.map { .id($0) } ?? .none, className.map { .class($0) } ?? .none,
            confirm.map { Attribute("data-confirm", $0) } ?? .none
        ) {
            input(.type("hidden"), .name("csrf"), .value(csrfToken))
            inner
        }
    }
}
