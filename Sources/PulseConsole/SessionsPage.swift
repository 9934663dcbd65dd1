import PulseHTML

/// `/console/sessions`: every session the principal may see.
enum SessionsPage {
    static let page = ConsolePage(path: "sessions", nav: "Sessions", allowed: { !$0.isPresenter }, get: render)

    static func render(_ context: PageContext) throws -> PageResult {
        let sessions = try context.storage.sessions().filter { context.principal.maySee(session: $0.id) }
        return .page(PageView(title: "Sessions") {
            p { "\(sessions.count) sessions" }
        })
    }
}
