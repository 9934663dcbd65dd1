import Foundation
import PulseConformance

exit(ConformanceCommand.main(Array(CommandLine.arguments.dropFirst())))
