import PulseHTML

/// `/console/sessions/<id>`: a session's state, rules and the clicker.
enum SessionPage {
    static let page = ConsolePage(path: "sessions/*", allowed: { _ in true }, get: render)

    static func render(_ context: PageContext) throws -> PageResult {
        let id = context.parameters[0]
        guard context.principal.maySee(session: id), let session = try context.storage.session(id: id) else {
            return .page(PageView(title: "Not found", status: 404) { p { "There is no such session." } })
        }
        return .page(PageView(title: session.id) {
            p { session.state.rawValue }
        })
    }
}
