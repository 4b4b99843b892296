// Command go-peer is the bench's controller-runtime peer of the aiops operator: a Go
// controller that reconciles AITasks (aiops.example.com/v2, as unstructured objects read
// from controller-runtime's cache) with the same first-reconcile requests as the operator's
// reconcile path, so `npm run bench -- peer` can put the two side by side on one cluster:
//
//  1. add the finalizer (an Update of the cached object);
//  2. on first sight, status phase Pending with Ready Unknown and Reconciling True;
//  3. create the spec's ControllerRevision (AlreadyExists is fine);
//  4. read the target Deployment from the cache and, with --prometheus-url, query the
//     task's trigger.query once;
//  5. write status phase Monitoring with observedGeneration and the Ready/Reconciling
//     conditions, then record one events.k8s.io/v1 Event synchronously (as the operator
//     does), and requeue after intervalSeconds.
//
// A task already evaluated at its generation is evaluated as the operator does every
// interval (`npm run bench -- steady`): one query; within threshold nothing is written; in
// breach, outside the task's cooldownSeconds (default 300), a Noop remediation is recorded
// with the operator's requests: the decision (a status write and an Event), then the outcome
// with lastExecutionTime (a status write and an Event). Each evaluation that starts after
// its requeue was due is observed in aiops_evaluation_lateness_seconds, the operator's
// histogram of the same name and buckets.
//
// Everything else is controller-runtime's defaults: the rest.Config from GetConfig (no
// client-side rate limit), MaxConcurrentReconciles from its flag (default 1), the priority
// queue, /readyz and /healthz on --health-probe-bind-address and /metrics on
// --metrics-bind-address (/readyz once the AITask and Deployment caches have synced, as
// the operator's). It is a benchmark peer, not a product: no spec decisions, no
// actions, no webhook.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const finalizer = "aiops.example.com/finalizer"

var taskGVK = schema.GroupVersionKind{Group: "aiops.example.com", Version: "v2", Kind: "AITask"}

// lateness is the operator's aiops_evaluation_lateness_seconds (operator/telemetry.ts), same buckets.
var lateness = prometheus.NewHistogram(prometheus.HistogramOpts{
	Name:    "aiops_evaluation_lateness_seconds",
	Help:    "How late AITask evaluations start against their due time",
	Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300},
})

// reconciler holds the manager's cache-backed client, the optional Prometheus URL, and when
// each task's requeued evaluation is due.
type reconciler struct {
	client     client.Client
	prometheus string
	http       *http.Client
	instance   string
	mu         sync.Mutex
	due        map[string]time.Time
}

// Reconcile observes the lateness of an evaluation that starts after its requeue was due
// (one that starts earlier was triggered by a change and is not counted), runs reconcile,
// and notes when the next one is due.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.String()
	r.mu.Lock()
	if at, ok := r.due[key]; ok {
		delete(r.due, key)
		if late := time.Since(at); late >= 0 {
			lateness.Observe(late.Seconds())
		}
	}
	r.mu.Unlock()
	res, err := r.reconcile(ctx, req)
	if err == nil && res.RequeueAfter > 0 {
		r.mu.Lock()
		r.due[key] = time.Now().Add(res.RequeueAfter)
		r.mu.Unlock()
	}
	return res, err
}

func newTask() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(taskGVK)
	return u
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

func condition(typ, status, reason, message string, generation int64) map[string]any {
	c := map[string]any{
		"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": now(),
	}
	if generation > 0 {
		c["observedGeneration"] = generation
	}
	return c
}

// reconcile runs steps 1-5 of the package comment for one AITask, or its steady evaluation.
func (r *reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	task := newTask()
	if err := r.client.Get(ctx, req.NamespacedName, task); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if task.GetDeletionTimestamp() != nil {
		if controllerutil.RemoveFinalizer(task, finalizer) {
			return reconcile.Result{}, client.IgnoreNotFound(r.client.Update(ctx, task))
		}
		return reconcile.Result{}, nil
	}
	if controllerutil.AddFinalizer(task, finalizer) {
		if err := r.client.Update(ctx, task); err != nil {
			return reconcile.Result{}, err
		}
	}
	if phase, _, _ := unstructured.NestedString(task.Object, "status", "phase"); phase == "" {
		msg := "seen by the operator; the first evaluation is under way"
		_ = unstructured.SetNestedField(task.Object, map[string]any{
			"phase": "Pending", "message": msg,
			"conditions": []any{
				condition("Ready", "Unknown", "Progressing", msg, 0),
				condition("Reconciling", "True", "Progressing", msg, 0),
			},
		}, "status")
		if err := r.client.Status().Update(ctx, task); err != nil {
			return reconcile.Result{}, err
		}
	}
	generation := task.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(task.Object, "status", "observedGeneration")
	if observed == generation {
		return r.evaluate(ctx, task)
	}
	if err := r.recordRevision(ctx, task); err != nil {
		return reconcile.Result{}, err
	}
	targetName, _, _ := unstructured.NestedString(task.Object, "spec", "target", "name")
	target := &appsv1.Deployment{}
	reason, message := "Healthy", "metric within threshold"
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: task.GetNamespace(), Name: targetName}, target); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		reason, message = "TargetNotFound", "target Deployment not found"
	} else if r.prometheus != "" {
		query, _, _ := unstructured.NestedString(task.Object, "spec", "trigger", "query")
		if _, err := r.query(ctx, query); err != nil {
			reason, message = "MetricsUnavailable", err.Error()
		}
	}
	_ = unstructured.SetNestedField(task.Object, map[string]any{
		"phase": "Monitoring", "message": message, "observedGeneration": generation,
		"conditions": []any{
			condition("Ready", "True", reason, message, generation),
			condition("Reconciling", "False", "Evaluated", message, generation),
		},
	}, "status")
	if err := r.client.Status().Update(ctx, task); err != nil {
		return reconcile.Result{}, err
	}
	r.event(ctx, task, reason, message)
	return r.requeue(task), nil
}

// evaluate is one steady-state evaluation of a task evaluated at its generation: the query,
// and in breach outside the cooldown a Noop remediation recorded as the operator does.
func (r *reconciler) evaluate(ctx context.Context, task *unstructured.Unstructured) (reconcile.Result, error) {
	if r.prometheus == "" {
		return r.requeue(task), nil
	}
	targetName, _, _ := unstructured.NestedString(task.Object, "spec", "target", "name")
	target := &appsv1.Deployment{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: task.GetNamespace(), Name: targetName}, target); err != nil {
		return r.requeue(task), client.IgnoreNotFound(err)
	}
	query, _, _ := unstructured.NestedString(task.Object, "spec", "trigger", "query")
	value, err := r.query(ctx, query)
	if err != nil || value <= number(task, "spec", "trigger", "threshold") {
		return r.requeue(task), nil
	}
	cooldown := 300 * time.Second
	if _, found, _ := unstructured.NestedFieldNoCopy(task.Object, "spec", "remediation", "cooldownSeconds"); found {
		cooldown = time.Duration(number(task, "spec", "remediation", "cooldownSeconds")) * time.Second
	}
	last, _, _ := unstructured.NestedString(task.Object, "status", "lastExecutionTime")
	if at, err := time.Parse(time.RFC3339, last); err == nil && time.Since(at) < cooldown {
		return r.requeue(task), nil
	}
	generation := task.GetGeneration()
	decided := fmt.Sprintf("metric %v > %v: decided Noop", value, number(task, "spec", "trigger", "threshold"))
	_ = unstructured.SetNestedField(task.Object, "Healing", "status", "phase")
	_ = unstructured.SetNestedField(task.Object, "running Noop", "status", "message")
	_ = unstructured.SetNestedSlice(task.Object, []any{
		condition("Ready", "False", "Breached", decided, generation),
		condition("Reconciling", "True", "Remediating", "running Noop", generation),
	}, "status", "conditions")
	if err := r.client.Status().Update(ctx, task); err != nil {
		return reconcile.Result{}, err
	}
	r.event(ctx, task, "Breached", decided)
	done := "recorded only (Noop)"
	_ = unstructured.SetNestedField(task.Object, "Monitoring", "status", "phase")
	_ = unstructured.SetNestedField(task.Object, done, "status", "message")
	_ = unstructured.SetNestedField(task.Object, now(), "status", "lastExecutionTime")
	_ = unstructured.SetNestedSlice(task.Object, []any{
		condition("Ready", "False", "Breached", decided, generation),
		condition("Reconciling", "False", "Reconciled", done, generation),
	}, "status", "conditions")
	if err := r.client.Status().Update(ctx, task); err != nil {
		return reconcile.Result{}, err
	}
	r.event(ctx, task, "Noop", done)
	return r.requeue(task), nil
}

// number reads a numeric field of the object (JSON decodes it as int64 or float64); 0 when absent.
func number(task *unstructured.Unstructured, fields ...string) float64 {
	v, _, _ := unstructured.NestedFieldNoCopy(task.Object, fields...)
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

func (r *reconciler) requeue(task *unstructured.Unstructured) reconcile.Result {
	secs, found, _ := unstructured.NestedInt64(task.Object, "spec", "intervalSeconds")
	if !found || secs <= 0 {
		secs = 60
	}
	return reconcile.Result{RequeueAfter: time.Duration(secs) * time.Second}
}

// recordRevision creates the ControllerRevision of the task's generation, as api/revisions.ts builds it.
func (r *reconciler) recordRevision(ctx context.Context, task *unstructured.Unstructured) error {
	spec, _, _ := unstructured.NestedMap(task.Object, "spec")
	gen := fmt.Sprint(task.GetGeneration())
	rev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "ControllerRevision",
		"metadata": map[string]any{
			"name": fmt.Sprintf("%s-g%s", task.GetName(), gen), "namespace": task.GetNamespace(),
			"labels":      map[string]any{"aiops.example.com/aitask-uid": string(task.GetUID()), "aiops.example.com/generation": gen},
			"annotations": map[string]any{"aiops.example.com/generation": gen, "aiops.example.com/aitask": task.GetName()},
			"ownerReferences": []any{map[string]any{
				"apiVersion": task.GetAPIVersion(), "kind": task.GetKind(), "name": task.GetName(),
				"uid": string(task.GetUID()), "controller": true, "blockOwnerDeletion": false,
			}},
		},
		"data": spec, "revision": task.GetGeneration(),
	}}
	if err := r.client.Create(ctx, rev); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// query asks Prometheus for `q` once (5 s timeout) and returns the first sample's value.
func (r *reconciler) query(ctx context.Context, q string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.prometheus+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return 0, err
	}
	res, err := r.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("prometheus: HTTP %d", res.StatusCode)
	}
	var answer struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || len(answer.Data.Result) == 0 {
		return 0, fmt.Errorf("prometheus: no sample")
	}
	text, _ := answer.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(text, 64)
}

// event writes one events.k8s.io/v1 Event about the task and waits for it; a failure is ignored.
func (r *reconciler) event(ctx context.Context, task *unstructured.Unstructured, reason, note string) {
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: task.GetName() + "." + hex.EncodeToString(suffix), Namespace: task.GetNamespace()},
		EventTime:           metav1.NewMicroTime(time.Now()),
		ReportingController: "aiops.example.com/go-peer",
		ReportingInstance:   r.instance,
		Action:              "Evaluate",
		Reason:              reason,
		Type:                "Normal",
		Note:                note,
		Regarding: corev1.ObjectReference{
			APIVersion: task.GetAPIVersion(), Kind: task.GetKind(), Name: task.GetName(),
			Namespace: task.GetNamespace(), UID: task.GetUID(),
		},
	}
	_ = r.client.Create(ctx, ev)
}

func main() {
	var namespace, selector, leaseNamespace, metricsAddr, probeAddr, prometheusURL string
	var workers int
	var leaderElect bool
	flag.StringVar(&namespace, "namespace", "", "the one namespace to watch (default: all)")
	flag.IntVar(&workers, "max-concurrent-reconciles", 1, "reconcile workers")
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address of /metrics (0 = off)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address of /readyz and /healthz")
	flag.StringVar(&selector, "watch-label-selector", "", "reconcile only AITasks matching this label selector (default: all)")
	flag.StringVar(&prometheusURL, "prometheus-url", "", "Prometheus to query once per evaluation (default: none)")
	flag.BoolVar(&leaderElect, "leader-elect", false, "take a Lease before reconciling")
	flag.StringVar(&leaseNamespace, "leader-election-namespace", "", "namespace of the Lease (default: --namespace)")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	if leaseNamespace == "" {
		leaseNamespace = namespace
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	cacheOpts := cache.Options{}
	if namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			fail(err)
		}
		cacheOpts.ByObject = map[client.Object]cache.ByObject{newTask(): {Label: sel}}
	}
	metrics.Registry.MustRegister(lateness)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Client:                  client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        "aiops-go-peer",
		LeaderElectionNamespace: leaseNamespace,
	})
	if err != nil {
		fail(err)
	}
	host, _ := os.Hostname()
	r := &reconciler{
		client: mgr.GetClient(), prometheus: strings.TrimRight(prometheusURL, "/"),
		http: &http.Client{}, instance: host, due: map[string]time.Time{},
	}
	if err := ctrl.NewControllerManagedBy(mgr).
		For(newTask()).
		Named("aitask").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r); err != nil {
		fail(err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		fail(err)
	}
	// Ready once the AITask and Deployment informers have synced, as the operator's /readyz.
	if err := mgr.AddReadyzCheck("caches", func(req *http.Request) error {
		for _, obj := range []client.Object{newTask(), &appsv1.Deployment{}} {
			inf, err := mgr.GetCache().GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
			if err != nil {
				return err
			}
			if !inf.HasSynced() {
				return fmt.Errorf("caches not synced")
			}
		}
		return nil
	}); err != nil {
		fail(err)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
