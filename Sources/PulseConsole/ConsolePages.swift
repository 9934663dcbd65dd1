/// Every signed-in page, in the order of the header's navigation. Adding a page is one line here and a file
/// of its own (see SessionsPage.swift): the console routes to it, checks `allowed`, CSRF and `Origin`, and
/// lays it out.
enum ConsolePages {
    static let all: [ConsolePage] = [
        SessionsPage.page,
        SessionPage.page,
        // Companion app devices, Devices, Report, Audit, Live view: the `pages` branch adds them here.
    ]
}
