package client

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// httpStatusMessage is how grpc-go reports an answer that was not gRPC's:
// an HTTP error page, which only something in front of hashlined sends
// (a proxy, an Ingress controller's default backend), since hashlined
// answers every call, an unknown RPC included, with a gRPC status. grpc-go
// gives it the code of the HTTP status (404 UNIMPLEMENTED, 502, 503 and
// 504 UNAVAILABLE), so the message, not the code, tells a proxy's 404
// from an older hashlined's UNIMPLEMENTED.
var httpStatusMessage = regexp.MustCompile(`^unexpected HTTP status code received from server: (\d{3})\b`)

// httpStatus returns the HTTP status of a call answered by something that
// does not speak gRPC, from the message grpc-go gives it, or 0.
func httpStatus(msg string) int {
	m := httpStatusMessage.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// proxyAnswer says what a proxy's HTTP error page means for a call meant
// for workspace: a 404 is a workspace the proxy routes nowhere (an
// Ingress's default backend answers an unknown host so), a 502, 503 or
// 504 a workspace whose hashlined is down, restarting or not answering.
// The message names the workspace, says what to do, and ends with the
// transport's words, the proxy's page included. ok is false for any other
// status, whose meaning a client cannot know.
func proxyAnswer(workspace string, httpCode int, orig string) (code codes.Code, msg string, ok bool) {
	q := strconv.Quote(workspace)
	answered := fmt.Sprintf("the proxy answered HTTP %d %s, not a hashlined", httpCode, http.StatusText(httpCode))
	switch httpCode {
	case http.StatusNotFound:
		return codes.NotFound, fmt.Sprintf("no workspace %s behind this router (%s); nothing was done. Check the workspace name, and that its hashlined is deployed and routed. The proxy's answer: %s", q, answered, orig), true
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return codes.Unavailable, fmt.Sprintf("workspace %s's hashlined is down, restarting or not answering (%s). Retry in a few seconds; if it persists, check that it is deployed and running. The proxy's answer: %s", q, answered, orig), true
	}
	return codes.OK, "", false
}

// fromProxy records in e, a call's decoded error, the HTTP status of a
// proxy's answer, and for a client given a workspace turns a 404, 502,
// 503 or 504 into the status proxyAnswer says, as the repository's router
// (deploy/nginx) answers them itself: a stock proxy in front of
// hashlined then reads as clearly as that router.
func (c *Client) fromProxy(e *Error) {
	if e.Reason != "" {
		return
	}
	e.HTTPStatus = httpStatus(e.Message)
	if e.HTTPStatus == 0 || c.workspace == "" {
		return
	}
	code, msg, ok := proxyAnswer(c.workspace, e.HTTPStatus, e.Message)
	if !ok {
		return
	}
	e.Code, e.Message, e.st = code, msg, status.New(code, msg)
}
