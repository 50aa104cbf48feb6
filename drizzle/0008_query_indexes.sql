CREATE INDEX "metric_history_metric_ts_idx" ON "app"."metric_history" USING btree ("metric","ts");--> statement-breakpoint
CREATE INDEX "trend_points_series_ts_idx" ON "gateway"."trend_points" USING btree ("series_key","ts");--> statement-breakpoint
CREATE INDEX "screener_insights_history_token_slug_idx" ON "gateway"."screener_insights_history" USING btree ("token_slug");--> statement-breakpoint
CREATE INDEX "trend_points_history_series_ts_idx" ON "gateway"."trend_points_history" USING btree ("series_key","ts");--> statement-breakpoint
CREATE INDEX "metric_history_history_metric_ts_idx" ON "app"."metric_history_history" USING btree ("metric","ts");--> statement-breakpoint
CREATE INDEX "metric_values_history_metric_idx" ON "app"."metric_values_history" USING btree ("metric");