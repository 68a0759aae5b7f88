package stack

import (
	"net/http"

	"github.com/movietrace/tracinglocks/functions/internal/streamproc"
)

// parts are the three handlers the stack runs.
type parts struct {
	api     http.Handler
	stream  StreamHandler
	worker  QueueHandler
	convert MessageConverter
}

// wire builds the handlers the way the Lambda mains do.
func wire(s *Stack, opts Options) (parts, error) {
	sp := streamproc.New(s.SQS, s.DynamoDB, s.QueueURL, s.Tables.Audit, opts.Log.With("component", "streamprocessor"))
	return parts{api: http.NotFoundHandler(), stream: sp.Handle}, nil
}
