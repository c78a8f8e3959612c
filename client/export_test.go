package client

// Sentinels is the generated table of sentinels by reason, for the tests
// of package client_test.
var Sentinels = sentinels
