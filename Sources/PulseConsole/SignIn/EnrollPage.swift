import PulseHTML
import PulseHTTPServer

extension Console {
    /// `GET /console/enroll`: where an enrollment link (docs/console.md) lands when a phone opens it in a
    /// browser rather than the app. Public, no script: the code or token is in the fragment, which the browser
    /// never sent, so the server knows nothing of it and the page only says what to do.
    func enrollPage() -> HTTPResponse {
        html(200, Layout.frame(title: "Join with the Pulse app", page: "enroll", events: nil) {
            main(.id("main"), .class("sign-in")) {
                h1 { "Join with the Pulse app" }
                p { "This link enrolls a phone in the event's companion app. Open it with the app installed, or scan its QR code from the app." }
                p(.class("muted")) { "The code in this link stays on your phone: it is not sent to this page." }
            }
        })
    }
}
