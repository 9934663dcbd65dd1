/// Every signed-in page, in the order of the header's navigation. Adding a page is one line here and a file
/// of its own (see SessionsPage.swift): the console routes to it, checks `allowed`, CSRF and `Origin`, and
/// lays it out.
enum ConsolePages {
    static let all: [ConsolePage] = [
        SessionsPage.page,
        SessionPage.page,
        SessionPage.advancePage,
        SessionPage.eventsPage,
        CompanionDevicesPage.page,
        StaffTokensPage.page,
        DevicesPage.page,
        DevicesPage.confirmPage,
        LivePage.indexPage,
        LivePage.page,
        LivePage.eventsPage,
        ReportPage.page,
        ReportPage.csvPage,
        AuditPage.page,
    ]
}
