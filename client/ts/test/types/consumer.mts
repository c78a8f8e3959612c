// A consumer of the package, type-checked with skipLibCheck off (npm test):
// the package's own declarations and its dependencies' must compile on the
// TypeScript versions the README names.
import { createClient, type StatusResponse } from "@hashline/client";

const s: Promise<StatusResponse> = createClient({ baseUrl: "http://127.0.0.1:1" }).status();
void s;
