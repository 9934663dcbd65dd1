import PulseCore
import PulseHTML
import PulseQR
import PulseServerStorage

/// A code or link just minted: its secret, its enrollment link and QR code, shown on this one answer only.
struct MintedView {
    let node: Node

    init(kind: CredentialKind, secret: String, id: String, scope: DeviceScope?, expires: String?, server: String?) {
        let isCode = kind == .deviceCode
        let credential: EnrollmentLink.Credential = isCode ? .deviceCode(secret) : .registrationToken(secret)
        let link = server.flatMap { try? EnrollmentLink(server: $0, credential: credential) }
        let qr = link.flatMap { try? QRCode($0.text, errorCorrection: .medium) }
        let what = isCode ? "Device code" : "Attendee link"
        // The text beside the QR code on a laptop's screen, so the whole code shows to a camera without scrolling.
        node = section(.class("notice minted"), Attribute("aria-labelledby", "minted")) {
            div(.class("minted-text")) {
                h2(.id("minted")) { "\(what) \(id) for \(PageText.scope(scope))" }
                p {
                    strong { "Shown once." }
                    " After you leave this page only its id, \(id), is shown again."
                }
                if isCode {
                    p {
                        "Code: "
                        code(.class("secret")) { secret }
                    }
                }
                if let link {
                    p {
                        "Link: "
                        code(.class("secret")) { link.text }
                    }
                } else {
                    p(.class("error")) { "No link: start pulse-server with --public-url so the console knows the address phones reach it at." }
                }
                if let expires { p(.class("muted")) { "Expires \(expires)." } }
            }
            if let qr {
                figure(.class("qr")) {
                    qr.svg(moduleSize: 6, quietZone: 4, label: "QR code of the enrollment link of \(what.lowercased()) \(id)")
                    figcaption { "Scan with the phone's camera, or run pulse-device enroll --link with the link above." }
                }
            }
        }
    }
}
