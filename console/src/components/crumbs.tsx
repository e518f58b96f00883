// The trail above a screen: each step a link, each followed by a slash.
import { Fragment } from "react";
import { link } from "../router.ts";

export function Crumbs({ trail }: { trail: { label: string; path: string }[] }) {
  return (
    <p className="crumbs">
      {trail.map((step) => (
        <Fragment key={step.path}>
          <a href={step.path} onClick={link(step.path)}>
            {step.label}
          </a>{" "}
          /{" "}
        </Fragment>
      ))}
    </p>
  );
}
